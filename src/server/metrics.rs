//! Counters for `/metrics`, written out in the Prometheus text format.

use std::fmt::Write;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// Upper bounds (ms) of the tick-duration histogram buckets.
const BUCKETS_MS: [f64; 10] = [0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 16.7, 33.3, 100.0];

#[derive(Default)]
pub struct WorldMetrics {
    pub ticks: AtomicU64,
    pub overruns: AtomicU64,
    pub dropped_ticks: AtomicU64,
    pub commands: AtomicU64,
    pub bytes_sent: AtomicU64,
    pub bodies: AtomicU64,
    pub contacts: AtomicU64,
    pub subscribers: AtomicU64,
    /// Cumulative bucket counts, then the sum of durations in µs.
    buckets: [AtomicU64; BUCKETS_MS.len() + 1],
    sum_us: AtomicU64,
}

impl WorldMetrics {
    pub fn record_tick(&self, ms: f64, bodies: usize, contacts: usize) {
        self.ticks.fetch_add(1, Ordering::Relaxed);
        let i = BUCKETS_MS
            .iter()
            .position(|&b| ms <= b)
            .unwrap_or(BUCKETS_MS.len());
        self.buckets[i].fetch_add(1, Ordering::Relaxed);
        self.sum_us
            .fetch_add((ms * 1000.0) as u64, Ordering::Relaxed);
        self.bodies.store(bodies as u64, Ordering::Relaxed);
        self.contacts.store(contacts as u64, Ordering::Relaxed);
    }
    pub fn record_overrun(&self) {
        self.overruns.fetch_add(1, Ordering::Relaxed);
    }
    pub fn record_dropped(&self, n: u64) {
        self.dropped_ticks.fetch_add(n, Ordering::Relaxed);
    }
    pub fn record_command(&self) {
        self.commands.fetch_add(1, Ordering::Relaxed);
    }
    pub fn record_bytes(&self, n: u64) {
        self.bytes_sent.fetch_add(n, Ordering::Relaxed);
    }
    pub fn set_subscribers(&self, n: usize) {
        self.subscribers.store(n as u64, Ordering::Relaxed);
    }
}

/// Server-wide counters plus the per-world ones.
#[derive(Default)]
pub struct Metrics {
    pub rejected_requests: AtomicU64,
    pub requests: AtomicU64,
    worlds: Mutex<Vec<(String, Arc<WorldMetrics>)>>,
}

impl Metrics {
    pub fn add_world(&self, id: &str) -> Arc<WorldMetrics> {
        let m = Arc::new(WorldMetrics::default());
        self.worlds
            .lock()
            .expect("metrics lock")
            .push((id.to_string(), m.clone()));
        m
    }

    pub fn remove_world(&self, id: &str) {
        self.worlds
            .lock()
            .expect("metrics lock")
            .retain(|(w, _)| w != id);
    }

    /// The Prometheus text exposition.
    pub fn render(&self) -> String {
        let mut out = String::new();
        let worlds = self.worlds.lock().expect("metrics lock").clone();
        let r = |a: &AtomicU64| a.load(Ordering::Relaxed);
        let _ = writeln!(out, "# HELP arbiter_requests_total REST requests received.\n# TYPE arbiter_requests_total counter");
        let _ = writeln!(out, "arbiter_requests_total {}", r(&self.requests));
        let _ = writeln!(out, "# HELP arbiter_rejected_requests_total REST requests answered with a 4xx.\n# TYPE arbiter_rejected_requests_total counter");
        let _ = writeln!(
            out,
            "arbiter_rejected_requests_total {}",
            r(&self.rejected_requests)
        );
        let _ = writeln!(
            out,
            "# HELP arbiter_worlds Worlds running.\n# TYPE arbiter_worlds gauge\narbiter_worlds {}",
            worlds.len()
        );
        let series: [Series; 8] = [
            ("arbiter_ticks_total", "counter", "Ticks stepped.", |m| {
                &m.ticks
            }),
            (
                "arbiter_tick_overruns_total",
                "counter",
                "Ticks that finished after the next was due.",
                |m| &m.overruns,
            ),
            (
                "arbiter_dropped_ticks_total",
                "counter",
                "Ticks skipped to catch up after overruns.",
                |m| &m.dropped_ticks,
            ),
            (
                "arbiter_commands_total",
                "counter",
                "Commands applied (REST and WebSocket).",
                |m| &m.commands,
            ),
            (
                "arbiter_stream_bytes_sent_total",
                "counter",
                "Stream bytes sent to subscribers.",
                |m| &m.bytes_sent,
            ),
            ("arbiter_bodies", "gauge", "Bodies in the world.", |m| {
                &m.bodies
            }),
            (
                "arbiter_contacts",
                "gauge",
                "Contact pairs in the world.",
                |m| &m.contacts,
            ),
            ("arbiter_subscribers", "gauge", "Stream subscribers.", |m| {
                &m.subscribers
            }),
        ];
        for (name, kind, help, get) in series {
            let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} {kind}");
            for (id, m) in &worlds {
                let _ = writeln!(out, "{name}{{world=\"{}\"}} {}", escape(id), r(get(m)));
            }
        }
        let _ = writeln!(out, "# HELP arbiter_tick_duration_ms Step duration per tick.\n# TYPE arbiter_tick_duration_ms histogram");
        for (id, m) in &worlds {
            let id = escape(id);
            let mut cum = 0;
            for (i, b) in BUCKETS_MS.iter().enumerate() {
                cum += r(&m.buckets[i]);
                let _ = writeln!(
                    out,
                    "arbiter_tick_duration_ms_bucket{{world=\"{id}\",le=\"{b}\"}} {cum}"
                );
            }
            cum += r(&m.buckets[BUCKETS_MS.len()]);
            let _ = writeln!(
                out,
                "arbiter_tick_duration_ms_bucket{{world=\"{id}\",le=\"+Inf\"}} {cum}"
            );
            let _ = writeln!(
                out,
                "arbiter_tick_duration_ms_sum{{world=\"{id}\"}} {}",
                r(&m.sum_us) as f64 / 1000.0
            );
            let _ = writeln!(
                out,
                "arbiter_tick_duration_ms_count{{world=\"{id}\"}} {cum}"
            );
        }
        out
    }
}

/// (name, type, help, the counter of a world).
type Series = (
    &'static str,
    &'static str,
    &'static str,
    fn(&WorldMetrics) -> &AtomicU64,
);

fn escape(s: &str) -> String {
    s.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}
