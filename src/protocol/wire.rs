//! Byte and bit primitives of the binary stream (proto/binary.md,
//! "Primitives"): little-endian fixed-size numbers, LEB128 varints, strings,
//! and an LSB-first bit stream with Exp-Golomb codes. Readers check every
//! bound and return [`DecodeError`] instead of panicking.

use std::fmt;

/// A malformed binary frame: where (byte offset into the frame, or into the
/// bit section for body records) and what was wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DecodeError {
    pub offset: usize,
    pub reason: &'static str,
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "malformed binary frame at byte {}: {}",
            self.offset, self.reason
        )
    }
}

impl std::error::Error for DecodeError {}

// ----------------------------------------------------------------------
// Writing bytes.
// ----------------------------------------------------------------------

pub fn put_u8(buf: &mut Vec<u8>, x: u8) {
    buf.push(x);
}

pub fn put_i16(buf: &mut Vec<u8>, x: i16) {
    buf.extend_from_slice(&x.to_le_bytes());
}

pub fn put_f32(buf: &mut Vec<u8>, x: f32) {
    buf.extend_from_slice(&x.to_le_bytes());
}

pub fn put_f64(buf: &mut Vec<u8>, x: f64) {
    buf.extend_from_slice(&x.to_le_bytes());
}

/// Unsigned LEB128: 7 bits per byte, least significant group first, high
/// bit set on every byte but the last.
pub fn put_varint(buf: &mut Vec<u8>, mut x: u64) {
    while x >= 0x80 {
        buf.push((x as u8) | 0x80);
        x >>= 7;
    }
    buf.push(x as u8);
}

pub fn put_str(buf: &mut Vec<u8>, s: &str) {
    put_varint(buf, s.len() as u64);
    buf.extend_from_slice(s.as_bytes());
}

/// Number of bytes `put_varint` writes for `x`.
#[cfg(test)]
pub fn varint_len(x: u64) -> usize {
    (64 - (x | 1).leading_zeros() as usize).div_ceil(7)
}

// ----------------------------------------------------------------------
// Reading bytes.
// ----------------------------------------------------------------------

/// A cursor over a frame. `base` is the offset of `data[0]` in the whole
/// frame, so errors from nested readers name frame offsets.
pub struct ByteReader<'a> {
    data: &'a [u8],
    pos: usize,
    base: usize,
}

impl<'a> ByteReader<'a> {
    pub fn new(data: &'a [u8]) -> Self {
        Self {
            data,
            pos: 0,
            base: 0,
        }
    }

    pub fn offset(&self) -> usize {
        self.base + self.pos
    }

    pub fn remaining(&self) -> usize {
        self.data.len() - self.pos
    }

    pub fn error(&self, reason: &'static str) -> DecodeError {
        DecodeError {
            offset: self.offset(),
            reason,
        }
    }

    pub fn bytes(&mut self, n: usize) -> Result<&'a [u8], DecodeError> {
        if n > self.remaining() {
            return Err(self.error("frame ends early"));
        }
        let s = &self.data[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }

    /// A reader over the next `n` bytes, which this one skips.
    pub fn sub(&mut self, n: usize) -> Result<ByteReader<'a>, DecodeError> {
        let base = self.offset();
        let data = self.bytes(n)?;
        Ok(ByteReader { data, pos: 0, base })
    }

    fn array<const N: usize>(&mut self) -> Result<[u8; N], DecodeError> {
        let mut a = [0u8; N];
        a.copy_from_slice(self.bytes(N)?);
        Ok(a)
    }

    pub fn u8(&mut self) -> Result<u8, DecodeError> {
        Ok(self.array::<1>()?[0])
    }

    pub fn i16(&mut self) -> Result<i16, DecodeError> {
        Ok(i16::from_le_bytes(self.array()?))
    }

    pub fn f32(&mut self) -> Result<f32, DecodeError> {
        Ok(f32::from_le_bytes(self.array()?))
    }

    pub fn f64(&mut self) -> Result<f64, DecodeError> {
        Ok(f64::from_le_bytes(self.array()?))
    }

    /// A 6-byte little-endian unsigned integer.
    pub fn u48(&mut self) -> Result<u64, DecodeError> {
        let b: [u8; 6] = self.array()?;
        Ok(b.iter().rev().fold(0u64, |acc, &x| (acc << 8) | x as u64))
    }

    /// An unsigned LEB128 of at most 10 bytes whose value fits in 64 bits.
    pub fn varint(&mut self) -> Result<u64, DecodeError> {
        let mut x = 0u64;
        for i in 0..10 {
            let b = self.u8()?;
            let bits = (b & 0x7f) as u64;
            if i == 9 && bits > 1 {
                return Err(self.error("varint overflows 64 bits"));
            }
            x |= bits << (7 * i);
            if b & 0x80 == 0 {
                return Ok(x);
            }
        }
        Err(self.error("varint longer than 10 bytes"))
    }

    /// A varint that must fit in a u32.
    pub fn varint32(&mut self) -> Result<u32, DecodeError> {
        let x = self.varint()?;
        u32::try_from(x).map_err(|_| self.error("varint overflows 32 bits"))
    }

    /// A count of items each at least `min_bytes` long: never more than the
    /// bytes left could hold, so a hostile count cannot make us allocate.
    pub fn count(&mut self, min_bytes: usize) -> Result<usize, DecodeError> {
        let n = self.varint()?;
        let limit = (self.remaining() / min_bytes.max(1)) as u64;
        if n > limit {
            return Err(self.error("count larger than the frame can hold"));
        }
        Ok(n as usize)
    }

    pub fn str(&mut self) -> Result<String, DecodeError> {
        let n = self.varint()?;
        if n > self.remaining() as u64 {
            return Err(self.error("string longer than the frame"));
        }
        let bytes = self.bytes(n as usize)?;
        std::str::from_utf8(bytes)
            .map(str::to_owned)
            .map_err(|_| self.error("string is not UTF-8"))
    }

    pub fn finish(&self) -> Result<(), DecodeError> {
        if self.remaining() == 0 {
            Ok(())
        } else {
            Err(self.error("trailing bytes after the message"))
        }
    }
}

// ----------------------------------------------------------------------
// Bits.
// ----------------------------------------------------------------------

/// Writes values of up to 32 bits, least significant bit first, filling
/// each byte from its least significant bit.
#[derive(Default)]
pub struct BitWriter {
    buf: Vec<u8>,
    acc: u64,
    nbits: u32,
}

impl BitWriter {
    pub fn clear(&mut self) {
        self.buf.clear();
        self.acc = 0;
        self.nbits = 0;
    }

    /// The low `n` (≤ 32) bits of `x`.
    pub fn write(&mut self, x: u64, n: u32) {
        debug_assert!(n <= 32);
        if n == 0 {
            return;
        }
        self.acc |= (x & ((1u64 << n) - 1)) << self.nbits;
        self.nbits += n;
        while self.nbits >= 8 {
            self.buf.push(self.acc as u8);
            self.acc >>= 8;
            self.nbits -= 8;
        }
    }

    pub fn bit(&mut self, b: bool) {
        self.write(b as u64, 1);
    }

    /// Exp-Golomb (order 0) code of `g`: with x = g + 1 of bit length n + 1,
    /// n zero bits, a one bit, then the low n bits of x.
    pub fn exp_golomb(&mut self, g: u64) {
        let x = g as u128 + 1;
        let n = 127 - x.leading_zeros();
        for _ in 0..n / 32 {
            self.write(0, 32);
        }
        self.write(0, n % 32);
        self.write(1, 1);
        let low = x & ((1u128 << n) - 1);
        self.write(low as u64 & 0xffff_ffff, n.min(32));
        if n > 32 {
            self.write((low >> 32) as u64, n - 32);
        }
    }

    /// Flushes the last partial byte (padding with zero bits) and returns
    /// the bytes.
    pub fn finish(&mut self) -> &[u8] {
        if self.nbits > 0 {
            self.buf.push(self.acc as u8);
            self.acc = 0;
            self.nbits = 0;
        }
        &self.buf
    }
}

/// Reads what [`BitWriter`] wrote. Errors name the bit section's byte offset
/// in the frame (`base`) plus the byte being read.
pub struct BitReader<'a> {
    data: &'a [u8],
    bit: usize,
    base: usize,
}

impl<'a> BitReader<'a> {
    pub fn new(data: &'a [u8], base: usize) -> Self {
        Self { data, bit: 0, base }
    }

    pub fn error(&self, reason: &'static str) -> DecodeError {
        DecodeError {
            offset: self.base + self.bit / 8,
            reason,
        }
    }

    pub fn bits_left(&self) -> usize {
        self.data.len() * 8 - self.bit
    }

    /// `n` (≤ 32) bits as an unsigned value.
    pub fn read(&mut self, n: u32) -> Result<u64, DecodeError> {
        debug_assert!(n <= 32);
        if n as usize > self.bits_left() {
            return Err(self.error("bit section ends early"));
        }
        let mut x = 0u64;
        let mut got = 0u32;
        while got < n {
            let byte = self.data[self.bit / 8] as u64;
            let shift = (self.bit % 8) as u32;
            let take = (8 - shift).min(n - got);
            let chunk = (byte >> shift) & ((1u64 << take) - 1);
            x |= chunk << got;
            got += take;
            self.bit += take as usize;
        }
        Ok(x)
    }

    pub fn bit(&mut self) -> Result<bool, DecodeError> {
        Ok(self.read(1)? == 1)
    }

    /// Inverse of [`BitWriter::exp_golomb`]; errors when the value would not
    /// fit in 64 bits.
    pub fn exp_golomb(&mut self) -> Result<u64, DecodeError> {
        let mut n = 0u32;
        while !self.bit()? {
            n += 1;
            if n > 64 {
                return Err(self.error("Exp-Golomb code longer than 64 bits"));
            }
        }
        let mut low = self.read(n.min(32))? as u128;
        if n > 32 {
            low |= (self.read(n - 32)? as u128) << 32;
        }
        let x = (1u128 << n) | low;
        u64::try_from(x - 1).map_err(|_| self.error("Exp-Golomb value overflows 64 bits"))
    }

    /// The padding after the last record must be zero bits in the last byte
    /// and nothing more.
    pub fn finish(&self) -> Result<(), DecodeError> {
        if self.bits_left() >= 8 {
            return Err(self.error("trailing bytes in the bit section"));
        }
        let pad = self.bits_left() as u32;
        if pad > 0 {
            let last = *self.data.last().unwrap_or(&0);
            if last >> (8 - pad) != 0 {
                return Err(self.error("non-zero padding bits"));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_round_trip_and_reject_overflow() {
        for x in [0, 1, 127, 128, 300, u32::MAX as u64, u64::MAX] {
            let mut b = Vec::new();
            put_varint(&mut b, x);
            assert_eq!(b.len(), varint_len(x));
            let mut r = ByteReader::new(&b);
            assert_eq!(r.varint().unwrap(), x);
            r.finish().unwrap();
        }
        let mut r = ByteReader::new(&[0xff; 10]);
        assert!(r.varint().is_err());
        let mut r = ByteReader::new(&[0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02]);
        assert!(r.varint().is_err());
        let mut r = ByteReader::new(&[0x80]);
        assert!(r.varint().is_err());
    }

    #[test]
    fn bits_and_exp_golomb_round_trip() {
        let values = [
            0u64,
            1,
            2,
            3,
            6,
            7,
            1000,
            u32::MAX as u64,
            1 << 40,
            u64::MAX,
        ];
        let mut w = BitWriter::default();
        for &v in &values {
            w.exp_golomb(v);
            w.write(v & 0x1f, 5);
            w.bit(true);
        }
        let bytes = w.finish().to_vec();
        let mut r = BitReader::new(&bytes, 0);
        for &v in &values {
            assert_eq!(r.exp_golomb().unwrap(), v);
            assert_eq!(r.read(5).unwrap(), v & 0x1f);
            assert!(r.bit().unwrap());
        }
        r.finish().unwrap();
        // Exp-Golomb lengths: 0 → "1", 1 → "010", 2 → "011".
        let mut w = BitWriter::default();
        w.exp_golomb(0);
        w.exp_golomb(1);
        w.exp_golomb(2);
        assert_eq!(w.finish(), &[0b0110_0101]);
    }

    #[test]
    fn bit_reader_rejects_overlong_codes_and_overruns() {
        let zeros = [0u8; 20];
        assert!(BitReader::new(&zeros, 0).exp_golomb().is_err());
        let mut r = BitReader::new(&[0xff], 0);
        assert!(r.read(9).is_err());
        assert!(BitReader::new(&[0, 0], 0).finish().is_err());
    }
}
