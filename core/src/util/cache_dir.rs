//! crucible's cache directory, one rule for every cache: proving keys, compiled CUDA
//! kernels and wgpu pipelines each keep a folder of it.

use std::ffi::OsString;
use std::path::PathBuf;

/// The folder of cached proving keys.
pub const KEYS: &str = "keys";
/// The folder of compiled CUDA kernels.
pub const CUDA: &str = "cuda";
/// The folder of wgpu's pipeline caches.
pub const WGPU: &str = "wgpu";
/// The folder of the digests of `.zkey` keys whose points passed their checks.
pub const VALIDATED: &str = "validated";

/// `folder` of the cache directory in the environment `var` gives:
/// `$CRUCIBLE_CACHE_DIR/<folder>`, else `$XDG_CACHE_HOME/crucible/<folder>`, else
/// `$HOME/.cache/crucible/<folder>`, else the system temp dir's `crucible/<folder>`.
/// An empty variable counts as unset (an empty path would mean the working directory).
pub fn cache_folder_from(var: impl Fn(&str) -> Option<OsString>, folder: &str) -> PathBuf {
    let set = |name: &str| var(name).filter(|v| !v.is_empty()).map(PathBuf::from);
    if let Some(dir) = set("CRUCIBLE_CACHE_DIR") {
        return dir.join(folder);
    }
    set("XDG_CACHE_HOME")
        .or_else(|| set("HOME").map(|h| h.join(".cache")))
        .unwrap_or_else(std::env::temp_dir)
        .join("crucible")
        .join(folder)
}

/// `folder` of the cache directory of this process's environment
/// ([`cache_folder_from`]).
pub fn cache_folder(folder: &str) -> PathBuf {
    cache_folder_from(|name| std::env::var_os(name), folder)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn env<'a>(pairs: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<OsString> + 'a {
        move |name: &str| {
            pairs
                .iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| OsString::from(v))
        }
    }

    #[test]
    fn every_cache_keeps_a_folder_of_one_directory() {
        let at = |pairs: &[(&str, &str)], folder| cache_folder_from(env(pairs), folder);
        assert_eq!(
            at(&[("CRUCIBLE_CACHE_DIR", "/c"), ("HOME", "/h")], KEYS),
            Path::new("/c/keys")
        );
        assert_eq!(
            at(&[("XDG_CACHE_HOME", "/x"), ("HOME", "/h")], CUDA),
            Path::new("/x/crucible/cuda")
        );
        assert_eq!(
            at(&[("HOME", "/h")], WGPU),
            Path::new("/h/.cache/crucible/wgpu")
        );
        // Empty variables count as unset.
        assert_eq!(
            at(
                &[
                    ("CRUCIBLE_CACHE_DIR", ""),
                    ("XDG_CACHE_HOME", ""),
                    ("HOME", "/h")
                ],
                KEYS
            ),
            Path::new("/h/.cache/crucible/keys")
        );
        let nowhere = at(&[], KEYS);
        assert!(nowhere.is_absolute(), "{}", nowhere.display());
        assert!(nowhere.ends_with("crucible/keys"));
    }
}
