//! A [`Zkey`] written back in snarkjs' `.zkey` form: sections 1 to 9 exactly as
//! snarkjs lays them out (a key read from a snarkjs file is written back with those
//! sections byte for byte), without section 10, the ceremony's contributions, which
//! proving does not read. Used to make keys of any size for tests and measurements.

use std::io::Write;
use std::path::Path;

use ark_ff::{BigInteger, Field, PrimeField};
use crucible_core::{Bls12_381, Fq, Fr, G1Affine, G2Affine, Result};

use crate::encoding::{g1_zkey_bytes, g2_zkey_bytes, modulus_bytes, FR_BYTES};
use crate::file_curve::{g1_bytes, g2_bytes};
use crate::output::write_atomically;
use crate::zkey::{
    Zkey, COEFFICIENTS, GROTH16, GROTH16_HEADER, IC, POINTS_A, POINTS_B1, POINTS_B2, POINTS_C,
    POINTS_H, PROTOCOL,
};

fn u32_le(n: usize) -> std::io::Result<[u8; 4]> {
    u32::try_from(n)
        .map(u32::to_le_bytes)
        .map_err(|_| std::io::Error::other(format!("{n} does not fit a .zkey's 32-bit field")))
}

fn g1s(points: &[G1Affine]) -> Vec<u8> {
    let mut out = vec![0u8; points.len() * g1_bytes::<Bls12_381>()];
    for (p, chunk) in points
        .iter()
        .zip(out.chunks_exact_mut(g1_bytes::<Bls12_381>()))
    {
        g1_zkey_bytes::<Bls12_381>(p, chunk);
    }
    out
}

fn g2s(points: &[G2Affine]) -> Vec<u8> {
    let mut out = vec![0u8; points.len() * g2_bytes::<Bls12_381>()];
    for (p, chunk) in points
        .iter()
        .zip(out.chunks_exact_mut(g2_bytes::<Bls12_381>()))
    {
        g2_zkey_bytes::<Bls12_381>(p, chunk);
    }
    out
}

impl Zkey {
    /// Writes the key to `path` in `.zkey` form, atomically (see [`Zkey`]'s reader
    /// for the layout); [`Zkey::read`] gives the same key back.
    pub fn write(&self, path: &Path) -> Result<()> {
        write_atomically(path, "snarkjs .zkey", |w| self.write_to(w))
    }

    /// Writes the key in `.zkey` form to `w`: the container's header, then sections
    /// 1 to 9. The coefficients are A's and B's terms row by row (A's first), then the
    /// public-input rows snarkjs appends to A, each value as the integer `v·R² mod r`.
    pub fn write_to<W: Write>(&self, w: &mut W) -> std::io::Result<()> {
        let pk = &self.proving_key;
        let mut header = Vec::new();
        header.extend_from_slice(&u32_le(48)?);
        header.extend_from_slice(&modulus_bytes(Fq::MODULUS));
        header.extend_from_slice(&u32_le(FR_BYTES)?);
        header.extend_from_slice(&modulus_bytes(Fr::MODULUS));
        for n in [self.num_wires, self.num_public, self.domain_size] {
            header.extend_from_slice(&u32_le(n)?);
        }
        header.extend(g1s(&[pk.vk.alpha_g1, pk.beta_g1]));
        header.extend(g2s(&[pk.vk.beta_g2, pk.vk.gamma_g2]));
        header.extend(g1s(&[pk.delta_g1]));
        header.extend(g2s(&[pk.vk.delta_g2]));

        let sections: [(u32, Vec<u8>); 9] = [
            (PROTOCOL, GROTH16.to_le_bytes().to_vec()),
            (GROTH16_HEADER, header),
            (IC, g1s(&pk.vk.gamma_abc_g1)),
            (COEFFICIENTS, self.coefficient_bytes()?),
            (POINTS_A, g1s(&pk.a_query)),
            (POINTS_B1, g1s(&pk.b_g1_query)),
            (POINTS_B2, g2s(&pk.b_g2_query)),
            (POINTS_C, g1s(&pk.l_query)),
            (POINTS_H, g1s(&pk.h_query)),
        ];
        w.write_all(b"zkey")?;
        w.write_all(&1u32.to_le_bytes())?;
        w.write_all(&u32_le(sections.len())?)?;
        for (kind, body) in &sections {
            w.write_all(&kind.to_le_bytes())?;
            w.write_all(&(body.len() as u64).to_le_bytes())?;
            w.write_all(body)?;
        }
        Ok(())
    }

    /// Section 4's body: the entry count, then `(matrix, row, wire, value)` entries.
    fn coefficient_bytes(&self) -> std::io::Result<Vec<u8>> {
        let r_squared = Fr::from(2u64).pow([512]);
        let mut entries = Vec::new();
        let mut count = 0usize;
        let mut entry = |matrix: usize, row: usize, wire: usize, value: Fr| {
            for n in [matrix, row, wire] {
                entries.extend_from_slice(&u32_le(n)?);
            }
            let mut v = (value * r_squared).into_bigint().to_bytes_le();
            v.resize(FR_BYTES, 0);
            entries.extend_from_slice(&v);
            count += 1;
            Ok::<_, std::io::Error>(())
        };
        for (row, (a, b)) in self.a.iter().zip(self.b.iter()).enumerate() {
            for (matrix, terms) in [(0, a), (1, b)] {
                for &(value, wire) in terms {
                    entry(matrix, row, wire, value)?;
                }
            }
        }
        for wire in 0..=self.num_public {
            entry(0, self.num_constraints + wire, wire, Fr::ONE)?;
        }
        let mut out = u32_le(count)?.to_vec();
        out.extend(entries);
        Ok(out)
    }
}
