//! Compiled pipelines kept across processes: one wgpu pipeline cache (Vulkan's
//! `VkPipelineCache`, `Features::PIPELINE_CACHE`) per shader module, saved in the
//! user's cache folder under a name keyed by the adapter, its driver and the module's
//! source, so that the next process creates its pipelines from the driver's cache
//! instead of compiling them again (NVIDIA's Vulkan driver takes seconds per
//! straight-line MSM kernel).
//!
//! A saved file is `MAGIC`, the FNV-1a hash of the data, then the data exactly as
//! `PipelineCache::get_data` returned it; a file that does not check out is ignored
//! (and overwritten by the next save). wgpu checks the data's own header (adapter,
//! driver's cache UUID, wgpu's format) before handing it to the driver.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use crucible_core::hash::Fnv1a;

/// The first bytes of a saved cache file (and its format's version).
const MAGIC: &[u8; 8] = b"CRUWGPC1";

/// Where a device's pipeline caches live.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CachePlace {
    /// Turned off.
    Off,
    /// The adapter has none (not Vulkan, or without `Features::PIPELINE_CACHE`).
    Unsupported,
    /// Saved in this folder.
    In(PathBuf),
}

impl CachePlace {
    /// Where `adapter` (whose features are `features`) keeps caches in `dir` (`None`:
    /// off).
    pub fn for_adapter(
        dir: Option<&Path>,
        adapter: &wgpu::AdapterInfo,
        features: wgpu::Features,
    ) -> CachePlace {
        match dir {
            None => CachePlace::Off,
            Some(dir)
                if features.contains(wgpu::Features::PIPELINE_CACHE)
                    && wgpu::util::pipeline_cache_key(adapter).is_some() =>
            {
                CachePlace::In(dir.to_path_buf())
            }
            Some(_) => CachePlace::Unsupported,
        }
    }

    /// What a module's pipelines get when no cache is opened for them.
    pub fn without_cache(&self) -> CacheUse {
        match self {
            CachePlace::Unsupported => CacheUse::Unsupported,
            _ => CacheUse::Off,
        }
    }
}

impl std::fmt::Display for CachePlace {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CachePlace::Off => write!(f, "pipeline cache off"),
            CachePlace::Unsupported => write!(f, "no pipeline cache on this adapter"),
            CachePlace::In(dir) => write!(f, "pipeline cache in {}", dir.display()),
        }
    }
}

/// What the pipeline cache did for a module's pipelines.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CacheUse {
    /// Turned off (the tuning's `pipeline_cache = false`, or no cache folder).
    Off,
    /// The adapter has no pipeline cache (wgpu has one on Vulkan only).
    Unsupported,
    /// Nothing usable was saved (no file, or why it was not used): the driver
    /// compiled, and the result is saved.
    Cold(String),
    /// Created from this many bytes of saved cache data.
    Loaded(usize),
}

impl std::fmt::Display for CacheUse {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CacheUse::Off => write!(f, "pipeline cache off"),
            CacheUse::Unsupported => write!(f, "no pipeline cache on this adapter"),
            CacheUse::Cold(why) => write!(f, "pipeline cache cold ({why})"),
            CacheUse::Loaded(bytes) => write!(f, "pipeline cache loaded ({bytes} bytes)"),
        }
    }
}

/// The file a module's cache is saved in: `<wgpu's adapter key>-<module>-<hash>.bin`,
/// the hash over the adapter's name and ids, its driver and the module's source; `None`
/// where wgpu has no pipeline cache for the adapter's API.
pub fn cache_file(
    dir: &Path,
    adapter: &wgpu::AdapterInfo,
    module: &str,
    source: &str,
) -> Option<PathBuf> {
    let prefix = wgpu::util::pipeline_cache_key(adapter)?;
    let key = Fnv1a::default()
        .write_parts(&[
            adapter.name.as_bytes(),
            &adapter.vendor.to_le_bytes(),
            &adapter.device.to_le_bytes(),
            format!("{:?}", adapter.backend).as_bytes(),
            adapter.driver.as_bytes(),
            adapter.driver_info.as_bytes(),
            source.as_bytes(),
        ])
        .finish();
    Some(dir.join(format!("{prefix}-{module}-{key:016x}.bin")))
}

/// `data` as a cache file's bytes.
fn encode(data: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(16 + data.len());
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&Fnv1a::default().write(data).finish().to_le_bytes());
    out.extend_from_slice(data);
    out
}

/// The data of a cache file's bytes, or why they are not one.
fn decode(file: &[u8]) -> Result<&[u8], &'static str> {
    let rest = file
        .strip_prefix(MAGIC)
        .ok_or("not a crucible cache file")?;
    if rest.len() < 8 {
        return Err("truncated");
    }
    let (hash, data) = rest.split_at(8);
    let want = u64::from_le_bytes(hash.try_into().map_err(|_| "truncated")?);
    if Fnv1a::default().write(data).finish() != want {
        return Err("its checksum does not match");
    }
    Ok(data)
}

/// Saved data at `path`, or why there is none to use.
fn load(path: &Path) -> Result<Vec<u8>, String> {
    let file = std::fs::read(path).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => "nothing saved yet".to_string(),
        _ => format!("{}: {e}", path.display()),
    })?;
    decode(&file)
        .map(<[u8]>::to_vec)
        .map_err(|why| format!("{}: {why}", path.display()))
}

/// Writes `bytes` to `path` through a temporary name and a rename, so that a reader
/// never sees half a file. The cache is an optimisation: a failure is returned for the
/// log and changes nothing else.
fn store(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)?;
    let tmp = dir.join(format!(
        ".{}.{:?}.tmp",
        std::process::id(),
        std::thread::current().id()
    ));
    let written = std::fs::write(&tmp, bytes).and_then(|()| std::fs::rename(&tmp, path));
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written
}

/// One module's pipeline cache and the file it is saved in.
pub struct ModuleCache {
    /// The cache its pipelines are created with.
    pub cache: wgpu::PipelineCache,
    path: PathBuf,
    /// The hash of the data last loaded or saved (no write when nothing changed).
    saved: Mutex<u64>,
}

impl ModuleCache {
    /// The cache of a module whose file is `path`, created from the data saved there
    /// if it checks out, and how.
    pub fn open(device: &wgpu::Device, path: PathBuf, label: &str) -> (ModuleCache, CacheUse) {
        let (data, usage) = match load(&path) {
            Ok(data) => {
                let n = data.len();
                (Some(data), CacheUse::Loaded(n))
            }
            Err(why) => (None, CacheUse::Cold(why)),
        };
        let hash = data
            .as_deref()
            .map_or(0, |d| Fnv1a::default().write(d).finish());
        // SAFETY: `data` is what `PipelineCache::get_data` returned in an earlier
        // process ([`ModuleCache::save`] writes nothing else into these files), checked
        // whole by its hash; wgpu then checks that it came from the same adapter,
        // driver and wgpu format, and `fallback: true` makes data the driver rejects an
        // empty cache instead of an error.
        #[allow(unsafe_code)]
        let cache = unsafe {
            device.create_pipeline_cache(&wgpu::PipelineCacheDescriptor {
                label: Some(label),
                data: data.as_deref(),
                fallback: true,
            })
        };
        let cache = ModuleCache {
            cache,
            path,
            saved: Mutex::new(hash),
        };
        (cache, usage)
    }

    /// Saves the cache's data if it changed since it was loaded or last saved; says why
    /// not when that fails.
    pub fn save(&self) -> Result<(), String> {
        let Some(data) = self.cache.get_data() else {
            return Ok(());
        };
        let hash = Fnv1a::default().write(&data).finish();
        let mut saved = self.saved.lock().unwrap_or_else(|p| p.into_inner());
        if *saved == hash {
            return Ok(());
        }
        store(&self.path, &encode(&data))
            .map_err(|e| format!("saving {}: {e}", self.path.display()))?;
        *saved = hash;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn adapter(backend: wgpu::Backend, driver: &str) -> wgpu::AdapterInfo {
        wgpu::AdapterInfo {
            name: "NVIDIA H200".into(),
            vendor: 0x10de,
            device: 0x2335,
            driver: "NVIDIA".into(),
            driver_info: driver.into(),
            ..wgpu::AdapterInfo::new(wgpu::DeviceType::DiscreteGpu, backend)
        }
    }

    #[test]
    fn cache_files_are_keyed_by_adapter_driver_and_source() {
        let dir = Path::new("/c");
        let vk = adapter(wgpu::Backend::Vulkan, "580.1");
        let file = |a: &wgpu::AdapterInfo, src: &str| cache_file(dir, a, "MsmG1", src);
        let base = file(&vk, "fn main() {}").expect("Vulkan has a pipeline cache");
        assert!(base.starts_with(dir));
        let name = base.file_name().unwrap().to_string_lossy().into_owned();
        assert!(name.starts_with("wgpu_pipeline_cache_vulkan_") && name.contains("-MsmG1-"));
        assert_eq!(file(&vk, "fn main() {}"), Some(base.clone()), "stable");
        assert_ne!(file(&vk, "fn main() { }"), Some(base.clone()), "source");
        assert_ne!(
            file(&adapter(wgpu::Backend::Vulkan, "580.2"), "fn main() {}"),
            Some(base),
            "driver"
        );
        assert_eq!(
            file(&adapter(wgpu::Backend::Metal, "1"), "x"),
            None,
            "no cache on Metal"
        );
    }

    #[test]
    fn saved_files_round_trip_and_damage_is_refused() {
        let data = b"driver's cache data".to_vec();
        let file = encode(&data);
        assert_eq!(decode(&file), Ok(&data[..]));
        assert_eq!(decode(&encode(&[])), Ok(&[][..]));
        let mut flipped = file.clone();
        *flipped.last_mut().unwrap() ^= 1;
        assert!(decode(&flipped).is_err(), "a changed byte");
        assert!(decode(&file[..file.len() - 1]).is_err(), "truncated data");
        assert!(decode(&file[..12]).is_err(), "truncated hash");
        assert!(decode(b"something else entirely").is_err(), "no magic");

        let dir = std::env::temp_dir().join(format!("crucible-wgpu-cache-{}", std::process::id()));
        let path = dir.join("x.bin");
        assert!(load(&path).unwrap_err().contains("nothing saved"));
        store(&path, &file).expect("temp dir is writable");
        assert_eq!(load(&path), Ok(data));
        std::fs::write(&path, &flipped).unwrap();
        assert!(load(&path).unwrap_err().contains("checksum"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
