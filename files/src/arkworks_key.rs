//! arkworks proving keys (ark-serialize, compressed or not) read from files crucible
//! did not write, every point checked, and the checks remembered as a `.zkey`'s are
//! ([`crate::validated_keys`]): a key read again skips them, most of its load time
//! (a G2 point's subgroup check alone is tens of microseconds).
//!
//! The key is first read without checks; the digest of the bytes read, with the form
//! they were read in, is then looked up. Remembered: the bytes are the very ones that
//! passed, so the points are too. Not remembered: every point is checked to be on its
//! curve and in the prime-order subgroup (the queries in one batch each, as a `.zkey`'s
//! are), and the digest is remembered once they pass.

use std::io::{BufReader, Read};
use std::path::Path;

use ark_ec::short_weierstrass::{Affine, SWCurveConfig};
use ark_serialize::{CanonicalDeserialize, Compress, Validate};
use crucible_core::groth16::{key_shape, ProvingKey};
use crucible_core::key_file::open_regular;
use crucible_core::{Error, PairingCurve, Result};
use rayon::prelude::*;

use crate::subgroup::{key_outside_subgroup, QueryNames};
use crate::validated_keys::{Digesting, ValidatedKeys};
use crate::SubgroupChecks;

/// The queries by their arkworks field names.
const QUERIES: QueryNames = [
    "vk.gamma_abc_g1",
    "a_query",
    "b_g1_query",
    "l_query",
    "h_query",
    "b_g2_query",
];

/// Reads an arkworks proving key of curve `E`, uncompressed or compressed, the points'
/// checks skipped where `validated` remembers the bytes read; says which.
pub fn read_remembering<E: PairingCurve>(
    path: &Path,
    validated: &ValidatedKeys,
) -> Result<(ProvingKey<E>, SubgroupChecks)> {
    read_as(path, Compress::No, validated).or_else(|uncompressed| {
        read_as(path, Compress::Yes, validated).map_err(|compressed| {
            Error::InvalidInput(format!(
                "{}: not an arkworks proving key for {}, uncompressed ({uncompressed}) or compressed ({compressed})",
                path.display(),
                E::CURVE.name()
            ))
        })
    })
}

/// The key in form `compress`: exactly one key in a regular file, its queries
/// consistent, its points checked unless remembered.
fn read_as<E: PairingCurve>(
    path: &Path,
    compress: Compress,
    validated: &ValidatedKeys,
) -> Result<(ProvingKey<E>, SubgroupChecks)> {
    let (file, _) = open_regular(path, "proving key")?;
    let invalid = |why: String| {
        Error::InvalidInput(format!("proving key {} is invalid: {why}", path.display()))
    };
    let mut reader = Digesting::new(BufReader::new(file));
    let pk = ProvingKey::<E>::deserialize_with_mode(&mut reader, compress, Validate::No)
        .map_err(|e| invalid(format!("truncated or corrupt ({e})")))?;
    let mut after = [0u8; 1];
    let more = reader
        .read(&mut after)
        .map_err(|e| invalid(e.to_string()))?;
    if more != 0 {
        return Err(invalid(
            "bytes follow the key (a file holds exactly one)".into(),
        ));
    }
    key_shape(&pk)?;
    // The same bytes read in the other form, or on the other curve, are other points:
    // the curve and the form are part of what was checked (BLS12-381 named by
    // omission, so that digests remembered before BN254 came still count).
    let mut digest = blake3::Hasher::new();
    digest.update(b"arkworks proving key, ");
    if E::CURVE != crucible_core::curve::Curve::Bls12_381 {
        digest.update(format!("{}, ", E::CURVE.name()).as_bytes());
    }
    let form = if compress == Compress::Yes {
        "compressed"
    } else {
        "uncompressed"
    };
    digest.update(form.as_bytes());
    digest.update(reader.digest().as_bytes());
    let digest = digest.finalize();
    if validated.contains(&digest) {
        return Ok((pk, SubgroupChecks::Remembered));
    }
    check_points(&pk).map_err(invalid)?;
    let _ = validated.remember(&digest);
    Ok((pk, SubgroupChecks::Ran))
}

/// Every point of `pk` on its curve and in the prime-order subgroup; the first that
/// is not, named.
fn check_points<E: PairingCurve>(pk: &ProvingKey<E>) -> std::result::Result<(), String> {
    let vk = &pk.vk;
    for (what, ok) in [
        ("vk.alpha_g1", valid(&vk.alpha_g1)),
        ("beta_g1", valid(&pk.beta_g1)),
        ("delta_g1", valid(&pk.delta_g1)),
        ("vk.beta_g2", valid(&vk.beta_g2)),
        ("vk.gamma_g2", valid(&vk.gamma_g2)),
        ("vk.delta_g2", valid(&vk.delta_g2)),
    ] {
        if !ok {
            return Err(format!("{what} is not a point of the prime-order subgroup"));
        }
    }
    let g1 = [
        &vk.gamma_abc_g1,
        &pk.a_query,
        &pk.b_g1_query,
        &pk.l_query,
        &pk.h_query,
    ];
    let off_curve = g1
        .into_iter()
        .map(|points| (points.len(), off_curve(points)))
        .chain(std::iter::once((
            pk.b_g2_query.len(),
            off_curve(&pk.b_g2_query),
        )))
        .zip(QUERIES)
        .find_map(|((len, at), what)| at.map(|i| (what, len, i)));
    if let Some((what, len, i)) = off_curve {
        return Err(format!("{what}, element {i} of {len}: not on the curve"));
    }
    match key_outside_subgroup(pk, QUERIES) {
        None => Ok(()),
        Some((what, len, i)) => Err(format!(
            "{what}, element {i} of {len}: not in the prime-order subgroup"
        )),
    }
}

fn valid<P: SWCurveConfig>(p: &Affine<P>) -> bool {
    p.is_on_curve() && p.is_in_correct_subgroup_assuming_on_curve()
}

/// The first of `points` not on its curve.
fn off_curve<P: SWCurveConfig>(points: &[Affine<P>]) -> Option<usize> {
    points.par_iter().position_first(|p| !p.is_on_curve())
}

#[cfg(test)]
mod tests {
    use ark_serialize::CanonicalSerialize;
    use crucible_core::fixtures::key_cache::generate_key;
    use crucible_core::Bls12_381;

    use super::*;

    struct Dir(std::path::PathBuf);

    impl Drop for Dir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    fn dir(name: &str) -> Dir {
        let d = std::env::temp_dir().join(format!(
            "crucible-arkworks-key-{name}-{}",
            std::process::id()
        ));
        std::fs::create_dir_all(&d).unwrap();
        Dir(d)
    }

    fn write(path: &Path, pk: &ProvingKey, compress: Compress) {
        let mut bytes = Vec::new();
        pk.serialize_with_mode(&mut bytes, compress).unwrap();
        std::fs::write(path, bytes).unwrap();
    }

    #[test]
    fn a_key_read_again_skips_its_checks_in_either_form() {
        let d = dir("again");
        let validated = ValidatedKeys::at(d.0.join("validated"));
        let pk = generate_key(40, 2, 7).unwrap();
        for (compress, form) in [
            (Compress::No, "uncompressed"),
            (Compress::Yes, "compressed"),
        ] {
            let path = d.0.join(format!("{form}.bin"));
            write(&path, &pk, compress);
            let (first, checks) = read_remembering(&path, &validated).unwrap();
            assert_eq!(checks, SubgroupChecks::Ran, "{form}");
            assert!(first == pk, "{form}");
            let (again, checks) = read_remembering(&path, &validated).unwrap();
            assert_eq!(checks, SubgroupChecks::Remembered, "{form}");
            assert!(again == pk, "{form}");
        }
    }

    #[test]
    fn a_changed_key_is_checked_again_and_a_bad_point_refused() {
        let d = dir("changed");
        let validated = ValidatedKeys::at(d.0.join("validated"));
        let mut pk = generate_key(40, 2, 8).unwrap();
        let path = d.0.join("key.bin");
        write(&path, &pk, Compress::No);
        read_remembering::<Bls12_381>(&path, &validated).unwrap();
        // A point on the curve but outside the subgroup (a multiple of a point of
        // the whole curve group): the same length, other bytes, so not remembered.
        let outside = (0u64..)
            .find_map(|x| {
                Affine::<ark_bls12_381::g1::Config>::get_point_from_x_unchecked(x.into(), false)
                    .filter(|p| !p.is_in_correct_subgroup_assuming_on_curve())
            })
            .unwrap();
        pk.h_query[3] = outside;
        write(&path, &pk, Compress::No);
        let e = read_remembering::<Bls12_381>(&path, &validated)
            .unwrap_err()
            .to_string();
        assert!(e.contains("h_query, element 3 of"), "{e}");
        assert!(e.contains("not in the prime-order subgroup"), "{e}");
        // A point on no curve is named as such.
        pk.a_query[1] = Affine::new_unchecked(pk.a_query[1].x, pk.a_query[1].x);
        write(&path, &pk, Compress::No);
        let e = read_remembering::<Bls12_381>(&path, &validated)
            .unwrap_err()
            .to_string();
        assert!(e.contains("a_query, element 1 of"), "{e}");
        assert!(e.contains("not on the curve"), "{e}");
    }
}
