//! Reading a host-readable (`MAP_READ`) buffer back to the host: mapping it, waiting for
//! the map callback, and copying its words out. Copying device data into such a buffer
//! first is the caller's (memory's through a batch, the batch's own timestamp resolve).

use crate::error::WgpuError;

use super::context::Context;

/// Maps the first `bytes` of the host-readable `staging` buffer, appends its words to
/// `words` and unmaps it. Whatever was copied into `staging` must have been submitted.
pub fn map_words(
    ctx: &Context,
    staging: &wgpu::Buffer,
    bytes: u64,
    words: &mut Vec<u32>,
) -> Result<(), WgpuError> {
    let (sender, mapped) = std::sync::mpsc::channel();
    staging.map_async(wgpu::MapMode::Read, 0..bytes, move |r| {
        // The receiver only goes away on an error path; nothing to report then.
        let _ = sender.send(r);
    });
    ctx.wait_for_map(None, &mapped)?;
    {
        let view = staging
            .get_mapped_range(0..bytes)
            .map_err(|e| WgpuError::Map(e.to_string()))?;
        words.extend(
            view.chunks_exact(4)
                .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]])),
        );
    }
    staging.unmap();
    Ok(())
}
