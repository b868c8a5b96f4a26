//! arkworks' 64-bit limbs as little-endian 32-bit words, the unit GPU buffers hold
//! (CUDA's and WGSL's integers are 32 bits). The limbs keep their Montgomery form, so
//! a field element crosses to the device and back as a copy.

use ark_ff::BigInt;

/// Writes `limbs` as `2 * limbs.len()` words into the front of `out`, low word first.
pub fn limbs_to_words(limbs: &[u64], out: &mut [u32]) {
    for (pair, limb) in out.chunks_exact_mut(2).zip(limbs) {
        pair[0] = *limb as u32;
        pair[1] = (*limb >> 32) as u32;
    }
}

/// Reads `N` limbs from the first `2 * N` words of `words` (low word first).
pub fn words_to_limbs<const N: usize>(words: &[u32]) -> BigInt<N> {
    let mut limbs = [0u64; N];
    for (limb, pair) in limbs.iter_mut().zip(words.chunks_exact(2)) {
        *limb = u64::from(pair[0]) | (u64::from(pair[1]) << 32);
    }
    BigInt(limbs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_are_little_endian_halves_and_round_trip() {
        let limbs = [0x0123_4567_89ab_cdef_u64, u64::MAX, 0, 1 << 63];
        let mut words = [0u32; 8];
        limbs_to_words(&limbs, &mut words);
        assert_eq!(words[..2], [0x89ab_cdef, 0x0123_4567]);
        assert_eq!(words[2..4], [u32::MAX, u32::MAX]);
        assert_eq!(words[7], 1 << 31);
        assert_eq!(words_to_limbs::<4>(&words), BigInt(limbs));
    }
}
