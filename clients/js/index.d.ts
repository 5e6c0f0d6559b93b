// Types of the Arbiter JavaScript client (index.js, binary.js, interpolation.js).

export type Vec3 = [number, number, number];
export type Quat = [number, number, number, number];

export type Shape =
  | { type: "sphere"; radius: number }
  | { type: "box"; half_extents: Vec3 }
  | { type: "capsule"; half_height: number; radius: number }
  | { type: "cylinder"; half_height: number; radius: number }
  | { type: "cone"; half_height: number; radius: number }
  | { type: "convex_hull"; points: Vec3[] }
  | { type: "plane"; normal: Vec3; offset?: number };

export interface BodySpec {
  kind?: "dynamic" | "static" | "kinematic";
  shape: Shape;
  position?: Vec3; rotation?: Quat; linear_velocity?: Vec3; angular_velocity?: Vec3;
  density?: number; mass?: number; friction?: number; restitution?: number;
  linear_damping?: number; angular_damping?: number; margin?: number; ccd?: boolean; label?: string;
}
export interface Body extends BodySpec { id: number; sleeping?: boolean }
export interface StepMs { last: number; mean: number; max: number }
export interface World {
  id: string; name: string; tick_hz: number; gravity: Vec3; paused: boolean;
  tick: number; time: number; body_count: number; step_ms: StepMs;
}
export interface BodyState { id: number; p: Vec3; q: Quat; v: Vec3; w: Vec3 }
export interface Contact { kind: "begin" | "end"; a: number; b: number; point: Vec3; normal: Vec3; impulse: number }
export interface Cable { id: number; points: Vec3[] }
export interface Hello { type: "hello"; world: World; bodies: Body[]; cables?: Cable[] }
export interface Tick {
  type: "tick"; tick: number; time: number; bodies: BodyState[]; contacts: Contact[];
  /** removed: body and cable ids; cables: those that moved since the last frame (all after a hello). */
  spawned: Body[]; removed: number[]; cables?: Cable[];
}
export interface Ack { type: "ack"; seq: number }
export interface StreamError { type: "error"; seq?: number; code: string; message: string }
export type ServerMessage = Hello | Tick | Ack | StreamError;
export interface RayHit { body: number; distance: number; point: Vec3; normal: Vec3 }

export class ArbiterError extends Error { status: number; code: string }
export class DecodeError extends Error { offset: number; reason: string }

export class BinaryDecoder {
  readonly size: number;
  decode(frame: ArrayBuffer | Uint8Array): ServerMessage;
  state(id: number): BodyState | undefined;
  states(): BodyState[];
}

export class WorldMirror {
  world?: World; bodies: Map<number, Body>; contacts: Contact[]; cables: Map<number, Cable>;
  apply(msg: ServerMessage): void;
}

export class InterpolationBuffer {
  constructor(opts?: { capacity?: number; now?: () => number });
  push(msg: ServerMessage): void;
  clear(): void;
  sampleBody(id: number, time: number): { p: Vec3; q: Quat } | undefined;
  sample(time: number): Map<number, { p: Vec3; q: Quat }>;
  renderTime(delay?: number): number;
  sampleNow(delay?: number): Map<number, { p: Vec3; q: Quat }>;
}

export interface SubscribeOptions {
  format?: "json" | "binary"; every?: number;
  onHello?: (m: Hello) => void; onTick?: (m: Tick) => void; onAck?: (m: Ack) => void;
  onError?: (e: Error) => void; onOpen?: () => void; onClose?: (ev: unknown) => void;
  reconnect?: boolean; minBackoffMs?: number; maxBackoffMs?: number;
}

export class Subscription {
  readonly connected: boolean;
  readonly ready: Promise<Hello>;
  mirror: WorldMirror; interpolation: InterpolationBuffer;
  bytesReceived: number; messagesReceived: number; connections: number;
  send(command: Record<string, unknown>): Promise<Ack>;
  close(): void;
}

export class ArbiterClient {
  constructor(baseUrl?: string, opts?: { fetch?: typeof fetch });
  baseUrl: string;
  health(): Promise<{ status: string }>;
  createWorld(spec?: { name?: string; tick_hz?: number; gravity?: Vec3 } | { scene: unknown }): Promise<World>;
  listWorlds(): Promise<World[]>;
  getWorld(worldId: string): Promise<World>;
  updateWorld(worldId: string, patch: { paused?: boolean; gravity?: Vec3; tick_hz?: number }): Promise<World>;
  deleteWorld(worldId: string): Promise<void>;
  step(worldId: string, steps?: number): Promise<{ tick: number }>;
  snapshot(worldId: string): Promise<unknown>;
  spawn(worldId: string, spec: BodySpec): Promise<Body>;
  spawn(worldId: string, specs: BodySpec[]): Promise<Body[]>;
  listBodies(worldId: string): Promise<Body[]>;
  getBody(worldId: string, id: number): Promise<Body>;
  updateBody(worldId: string, id: number, patch: Partial<Pick<Body, "position" | "rotation" | "linear_velocity" | "angular_velocity">>): Promise<Body>;
  removeBody(worldId: string, id: number): Promise<void>;
  applyImpulse(worldId: string, id: number, impulse: Vec3, point?: Vec3, angularImpulse?: Vec3): Promise<unknown>;
  setVelocity(worldId: string, id: number, linear?: Vec3, angular?: Vec3): Promise<Body>;
  raycast(worldId: string, origin: Vec3, direction: Vec3, maxDistance?: number): Promise<RayHit | null>;
  addCable(worldId: string, spec: unknown): Promise<Cable>;
  streamUrl(worldId: string, format?: "json" | "binary", every?: number): string;
  subscribe(worldId: string, opts?: SubscribeOptions): Subscription;
}
export default ArbiterClient;
