//! Proving-key files: untrusted keys fully validated, and a cache that knows which key
//! it holds, never hangs on what it finds in its place, and survives concurrent writers.

use crate::common::*;
use ark_serialize::CanonicalSerialize;
use crucible_core::fixtures::key_cache::{generate_key, KeySource};

#[test]
fn untrusted_key_files_are_validated() {
    use ark_ff::{Field, One};
    use ark_serialize::Compress;
    use crucible_core::key_file::load_untrusted_key;
    use crucible_core::{Fq, G1Affine};

    let seed = seed();
    let pk = generate_key(CONSTRAINTS, INPUTS, seed).unwrap();
    let (_dir, path, bytes) = key_file(&pk);

    std::fs::write(&path, &bytes).unwrap();
    let loaded = load_untrusted_key(&path, Compress::No).unwrap();
    assert_eq!(loaded, pk, "a valid key round-trips");

    std::fs::write(&path, &bytes[..bytes.len() / 2]).unwrap();
    let e = load_untrusted_key(&path, Compress::No).unwrap_err();
    assert!(e.to_string().contains("invalid"), "truncated: {e}");

    // A point whose x is moved by one is (with overwhelming probability) off the curve.
    let mut off_curve = pk.clone();
    let p = off_curve.a_query[1];
    off_curve.a_query[1] = G1Affine::new_unchecked(p.x + Fq::one(), p.y);
    let mut b = Vec::new();
    off_curve.serialize_uncompressed(&mut b).unwrap();
    std::fs::write(&path, &b).unwrap();
    assert!(
        load_untrusted_key(&path, Compress::No).is_err(),
        "off-curve point accepted"
    );

    // A point on the curve outside the prime-order subgroup (G1's cofactor is large).
    let mut x = Fq::from(seed % 1000 + 5);
    let outside = loop {
        if let Some(y) = (x * x * x + Fq::from(4u64)).sqrt() {
            let q = G1Affine::new_unchecked(x, y);
            if q.is_on_curve() && !q.is_in_correct_subgroup_assuming_on_curve() {
                break q;
            }
        }
        x += Fq::one();
    };
    let mut bad_subgroup = pk.clone();
    bad_subgroup.h_query[0] = outside;
    let mut b = Vec::new();
    bad_subgroup.serialize_uncompressed(&mut b).unwrap();
    std::fs::write(&path, &b).unwrap();
    assert!(
        load_untrusted_key(&path, Compress::No).is_err(),
        "point outside the subgroup accepted"
    );

    assert!(load_untrusted_key(&path.with_extension("missing"), Compress::No).is_err());

    // One key and then more bytes: not one key file.
    let mut trailing = bytes.clone();
    trailing.push(0);
    std::fs::write(&path, &trailing).unwrap();
    let e = load_untrusted_key(&path, Compress::No)
        .unwrap_err()
        .to_string();
    assert!(e.contains("1 bytes follow the key"), "trailing byte: {e}");

    // A directory, not a file: an error, not a hang or a read.
    let e = load_untrusted_key(&std::env::temp_dir(), Compress::No)
        .unwrap_err()
        .to_string();
    assert!(e.contains("is a directory"), "{e}");
}

#[test]
fn corrupt_key_cache_is_regenerated_never_used() {
    use crucible_core::fixtures::key_cache::KeyCache;
    let dir = tempdir::Dir::new();
    let cache = KeyCache::new(&dir.0);
    let (pk, source) = cache
        .get_or_generate(CONSTRAINTS, INPUTS, 3, &mut |_| {})
        .unwrap();
    assert_eq!(source, KeySource::Generated);
    let (again, source) = cache
        .get_or_generate(CONSTRAINTS, INPUTS, 3, &mut |_| {})
        .unwrap();
    assert_eq!((source, &again), (KeySource::Cached, &pk));
    let path = cache.path(CONSTRAINTS, INPUTS, 3);
    let mut bytes = std::fs::read(&path).unwrap();
    let mid = bytes.len() / 2;
    bytes[mid] ^= 0x40;
    std::fs::write(&path, &bytes).unwrap();
    let (fixed, source) = cache
        .get_or_generate(CONSTRAINTS, INPUTS, 3, &mut |_| {})
        .unwrap();
    assert!(
        matches!(source, KeySource::Regenerated { .. }),
        "{source:?}"
    );
    assert_eq!(fixed, pk, "same seed, same key");
    std::fs::write(&path, &bytes[..100]).unwrap();
    let (_, source) = cache
        .get_or_generate(CONSTRAINTS, INPUTS, 3, &mut |_| {})
        .unwrap();
    assert!(
        matches!(source, KeySource::Regenerated { .. }),
        "{source:?}"
    );
}

fn cache_in(dir: &tempdir::Dir) -> crucible_core::fixtures::key_cache::KeyCache {
    crucible_core::fixtures::key_cache::KeyCache::new(&dir.0)
}

fn regenerated(source: &KeySource) -> bool {
    matches!(source, KeySource::Regenerated { .. })
}

/// Runs `f` on another thread; fails instead of hanging when it takes over `limit`.
fn within<T: Send + 'static>(
    limit: std::time::Duration,
    f: impl FnOnce() -> T + Send + 'static,
) -> T {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    rx.recv_timeout(limit)
        .unwrap_or_else(|_| panic!("did not finish within {limit:?}: it hung"))
}

#[test]
fn a_key_of_another_seed_copied_over_the_cache_file_is_regenerated() {
    let dir = tempdir::Dir::new();
    let cache = cache_in(&dir);
    let (other, _) = cache
        .get_or_generate(CONSTRAINTS, INPUTS, 1, &mut |_| {})
        .unwrap();
    std::fs::copy(
        cache.path(CONSTRAINTS, INPUTS, 1),
        cache.path(CONSTRAINTS, INPUTS, 0),
    )
    .unwrap();
    let (pk, source) = cache
        .get_or_generate(CONSTRAINTS, INPUTS, 0, &mut |_| {})
        .unwrap();
    let KeySource::Regenerated { why } = &source else {
        panic!("another seed's key was used: {source:?}");
    };
    assert!(why.contains("seed 1"), "{why}");
    assert_ne!(pk, other);
    assert_eq!(pk, generate_key(CONSTRAINTS, INPUTS, 0).unwrap());
    let (_, source) = cache
        .get_or_generate(CONSTRAINTS, INPUTS, 0, &mut |_| {})
        .unwrap();
    assert_eq!(source, KeySource::Cached, "the file was replaced");
}

#[test]
fn a_cache_file_holding_a_key_of_the_wrong_size_is_replaced() {
    use crucible_core::fixtures::key_cache::{save_cached_key, BenchKeyId, KeySource};
    let dir = tempdir::Dir::new();
    let cache = cache_in(&dir);
    let id = BenchKeyId {
        constraints: CONSTRAINTS,
        inputs: INPUTS,
        seed: 5,
        bits_per_mille: 0,
    };
    // A consistent header (hash and length of its body) over a smaller circuit's key.
    let small = generate_key(CONSTRAINTS - 8, INPUTS, 5).unwrap();
    save_cached_key(&cache.path(CONSTRAINTS, INPUTS, 5), &id, &small).unwrap();
    let (pk, source) = cache
        .get_or_generate(CONSTRAINTS, INPUTS, 5, &mut |_| {})
        .unwrap();
    assert!(regenerated(&source), "{source:?}");
    assert_eq!(pk, generate_key(CONSTRAINTS, INPUTS, 5).unwrap());
    let (_, source) = cache
        .get_or_generate(CONSTRAINTS, INPUTS, 5, &mut |_| {})
        .unwrap();
    assert_eq!(source, KeySource::Cached);
}

#[cfg(unix)]
#[test]
fn a_cache_file_others_could_have_changed_is_never_used() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempdir::Dir::new();
    let cache = cache_in(&dir);
    cache
        .get_or_generate(CONSTRAINTS, INPUTS, 2, &mut |_| {})
        .unwrap();
    let path = cache.path(CONSTRAINTS, INPUTS, 2);
    let mode = std::fs::metadata(&path).unwrap().permissions().mode();
    assert_eq!(mode & 0o077, 0, "written for this user only: {mode:o}");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o666)).unwrap();
    let (_, source) = cache
        .get_or_generate(CONSTRAINTS, INPUTS, 2, &mut |_| {})
        .unwrap();
    let crucible_core::fixtures::key_cache::KeySource::Regenerated { why } = source else {
        panic!("a world-writable cache file was used");
    };
    assert!(why.contains("writable by others"), "{why}");
}

#[test]
fn concurrent_writers_of_one_cache_file_all_succeed() {
    use crucible_core::fixtures::key_cache::{load_cached_key, save_cached_key, BenchKeyId};
    let dir = tempdir::Dir::new();
    let path = dir.0.join("shared.pk");
    let id = BenchKeyId {
        constraints: CONSTRAINTS,
        inputs: INPUTS,
        seed: 9,
        bits_per_mille: 0,
    };
    let pk = std::sync::Arc::new(generate_key(CONSTRAINTS, INPUTS, 9).unwrap());
    for round in 0..5 {
        let writers: Vec<_> = (0..8)
            .map(|_| {
                let (path, pk) = (path.clone(), pk.clone());
                std::thread::spawn(move || save_cached_key(&path, &id, &pk))
            })
            .collect();
        for w in writers {
            let written = w.join().unwrap();
            assert!(written.is_ok(), "round {round}: {written:?}");
        }
        assert_eq!(load_cached_key(&path, &id).unwrap(), *pk);
    }
    let left: Vec<_> = std::fs::read_dir(&dir.0)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(left.len(), 1, "no temporary file left behind: {left:?}");
}

/// Whatever sits at the cache path: a regeneration (cached where it can be), at once,
/// never a hang and never a read of the whole thing.
#[cfg(unix)]
#[test]
fn odd_things_at_the_cache_path_are_refused_at_once() {
    use std::os::unix::fs::PermissionsExt;
    use std::time::Duration;
    let limit = Duration::from_secs(60);
    let dir = tempdir::Dir::new();
    let cache = cache_in(&dir);
    let path = |seed| cache.path(CONSTRAINTS, INPUTS, seed);
    let get = |seed: u64| {
        let cache = cache.clone();
        within(limit, move || {
            cache.get_or_generate(CONSTRAINTS, INPUTS, seed, &mut |_| {})
        })
    };

    // A directory cannot be replaced: the key is generated and returned, not cached.
    std::fs::create_dir_all(path(1)).unwrap();
    let (pk, source) = get(1).unwrap();
    assert_eq!(pk, generate_key(CONSTRAINTS, INPUTS, 1).unwrap());
    let KeySource::Unsaved { why } = &source else {
        panic!("a directory at the cache path: {source:?}");
    };
    assert!(why.contains("cannot write key cache"), "{why}");
    assert!(std::fs::metadata(path(1)).unwrap().is_dir());

    let fifo = std::process::Command::new("mkfifo").arg(path(2)).status();
    if fifo.is_ok_and(|s| s.success()) {
        let (_, source) = get(2).unwrap();
        assert!(regenerated(&source), "FIFO: {source:?}");
        assert!(std::fs::metadata(path(2)).unwrap().is_file());
    }

    std::os::unix::fs::symlink("/dev/zero", path(3)).unwrap();
    let (_, source) = get(3).unwrap();
    assert!(regenerated(&source), "/dev/zero: {source:?}");

    let sparse = std::fs::File::create(path(4)).unwrap();
    sparse.set_len(3 << 30).unwrap();
    drop(sparse);
    let started = std::time::Instant::now();
    let (_, source) = get(4).unwrap();
    assert!(regenerated(&source), "sparse file: {source:?}");
    assert!(
        started.elapsed() < Duration::from_secs(30),
        "the sparse file was read whole"
    );
    assert!(std::fs::metadata(path(4)).unwrap().len() < 1 << 20);

    get(5).unwrap();
    std::fs::set_permissions(path(5), std::fs::Permissions::from_mode(0o000)).unwrap();
    // Unreadable: regenerated (as root it is still readable, and used).
    let (pk, _) = get(5).unwrap();
    assert_eq!(pk, generate_key(CONSTRAINTS, INPUTS, 5).unwrap());
}
