//! FNV-1a (64 bits): a hash that is the same on every build and platform, for values
//! derived from names and for cache keys (std's hashers are seeded per process). Not
//! for integrity: it detects no tampering.

const OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
const PRIME: u64 = 0x0000_0100_0000_01b3;

/// An FNV-1a state fed bytes in pieces.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fnv1a(u64);

impl Default for Fnv1a {
    fn default() -> Self {
        Fnv1a(OFFSET)
    }
}

impl Fnv1a {
    /// Feeds `bytes`.
    pub fn write(&mut self, bytes: &[u8]) -> &mut Self {
        for &b in bytes {
            self.0 = (self.0 ^ u64::from(b)).wrapping_mul(PRIME);
        }
        self
    }

    /// Feeds `parts`, each followed by a 0xff byte (never in UTF-8 text), so that part
    /// boundaries count: `["ab", "c"]` and `["a", "bc"]` hash differently.
    pub fn write_parts(&mut self, parts: &[&[u8]]) -> &mut Self {
        for part in parts {
            self.write(part).write(&[0xff]);
        }
        self
    }

    /// The hash of everything fed so far.
    pub fn finish(&self) -> u64 {
        self.0
    }
}

/// The FNV-1a hash of `bytes`.
pub fn fnv1a(bytes: &[u8]) -> u64 {
    Fnv1a::default().write(bytes).finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_the_published_fnv1a_values_and_counts_part_boundaries() {
        // The reference values of FNV-1a 64 for "" and "a".
        assert_eq!(fnv1a(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a(b"a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(fnv1a(b"foobar"), 0x8594_4171_f739_67e8);
        let parts = |p: &[&[u8]]| Fnv1a::default().write_parts(p).finish();
        assert_eq!(parts(&[b"src", b"opts"]), parts(&[b"src", b"opts"]));
        assert_ne!(parts(&[b"ab", b"c"]), parts(&[b"a", b"bc"]));
        assert_ne!(parts(&[b"src", b"opts"]), parts(&[b"src2", b"opts"]));
    }
}
