//! FNV-1a, 64 bits: the one non-cryptographic hash of the crate (case shards, the files of a
//! pack directory, the case files a result ran), and SHA-256 where spec 004 names it. Stable across builds and platforms, so its
//! values may be written to results and compared between runs.

const OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
const PRIME: u64 = 0x0000_0100_0000_01b3;

/// An FNV-1a state: feed it bytes, read the hash.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fnv1a(u64);

impl Default for Fnv1a {
    fn default() -> Self {
        Fnv1a(OFFSET)
    }
}

impl Fnv1a {
    pub fn new() -> Self {
        Self::default()
    }
    pub fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 = (self.0 ^ *b as u64).wrapping_mul(PRIME);
        }
    }
    pub fn finish(self) -> u64 {
        self.0
    }
}

/// FNV-1a 64 of one byte string.
pub fn fnv1a64(bytes: &[u8]) -> u64 {
    let mut h = Fnv1a::new();
    h.write(bytes);
    h.finish()
}

/// FNV-1a 64 over several byte strings, each followed by the byte 0xFF (which no UTF-8 text
/// holds, so `["ab", "c"]` and `["a", "bc"]` differ), as 16 hex digits.
pub fn fnv1a_parts<P: AsRef<[u8]>>(parts: impl IntoIterator<Item = P>) -> String {
    let mut h = Fnv1a::new();
    for part in parts {
        h.write(part.as_ref());
        h.write(&[0xff]);
    }
    format!("{:016x}", h.finish())
}

/// SHA-256 as lowercase hex: the content hash spec 004 names (`sha256:<hex>` of a skill's file,
/// an artifact's `sha256`).
pub fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_values() {
        // The published FNV-1a 64 test vectors.
        assert_eq!(fnv1a64(b""), 0xcbf29ce484222325);
        assert_eq!(fnv1a64(b"a"), 0xaf63dc4c8601ec8c);
        assert_eq!(fnv1a64(b"foobar"), 0x85944171f73967e8);
        assert_ne!(
            fnv1a_parts([b"ab".to_vec(), b"c".to_vec()]),
            fnv1a_parts([b"a".to_vec(), b"bc".to_vec()])
        );
        // FIPS 180-2's "abc".
        assert_eq!(
            sha256_hex(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }
}
