//! One NTT dispatch as data: the kernel, its parameters and the tables it binds.
//! Every path's plan is a list of [`Step`]s that ntt/mod.rs records.

use crate::wgsl::params::NttParams;
use crate::wgsl::WORKGROUP;

/// An entry point of shaders/ntt.wgsl.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kernel {
    Twiddles,
    Scale,
    Bitrev,
    Butterfly,
    Powers,
    TwiddleTable,
    BitrevPowers,
    ScalePowers,
    TileStages,
}

impl Kernel {
    pub fn entry(self) -> &'static str {
        match self {
            Kernel::Twiddles => "twiddles",
            Kernel::Scale => "scale",
            Kernel::Bitrev => "bitrev",
            Kernel::Butterfly => "butterfly",
            Kernel::Powers => "powers",
            Kernel::TwiddleTable => "twiddle_table",
            Kernel::BitrevPowers => "bitrev_powers",
            Kernel::ScalePowers => "scale_powers",
            Kernel::TileStages => "tile_stages",
        }
    }

    /// The phase a dispatch of this entry point counts under in the profile: its
    /// name, and for `tile_stages` which of the transform's tile dispatches it is
    /// (`tiles` counts them).
    pub fn phase(self, tiles: &mut usize) -> &'static str {
        const TILES: [&str; 4] = [
            "tile_stages 1",
            "tile_stages 2",
            "tile_stages 3",
            "tile_stages 4+",
        ];
        if self != Kernel::TileStages {
            return self.entry();
        }
        *tiles += 1;
        TILES[(*tiles - 1).min(TILES.len() - 1)]
    }

    /// The table bindings the entry point reads: `tw` (3) and `pw` (4).
    pub fn tables(self) -> (bool, bool) {
        match self {
            Kernel::Twiddles | Kernel::Butterfly => (true, false),
            Kernel::Scale | Kernel::Bitrev => (false, false),
            Kernel::Powers | Kernel::BitrevPowers | Kernel::ScalePowers => (false, true),
            Kernel::TwiddleTable | Kernel::TileStages => (true, true),
        }
    }

    /// Whether the entry point reads and writes the data (bindings 1 and 2).
    pub fn data(self) -> bool {
        !matches!(
            self,
            Kernel::Twiddles | Kernel::Powers | Kernel::TwiddleTable
        )
    }
}

/// A table buffer a dispatch binds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Table {
    /// This transform's power-table scratch (ntt/twiddles.rs's `TWIDDLES_ITEM`).
    Scratch,
    /// The kept twiddle table (`TABLE_ITEM`).
    Twiddles,
    /// The kept coset powers of this transform's kind (`COSET_ITEM` or
    /// `COSET_INV_ITEM`).
    Coset,
}

/// One dispatch: its kernel, parameters and tables.
pub struct Step {
    pub kernel: Kernel,
    pub params: NttParams,
    pub tw: Table,
    pub pw: Table,
}

impl Step {
    /// A step whose entry point reads no table, or only the scratch tables.
    pub fn plain(kernel: Kernel, params: NttParams) -> Step {
        Step {
            kernel,
            params,
            tw: Table::Scratch,
            pw: Table::Scratch,
        }
    }

    /// Threads of its dispatch: one workgroup a tile for the tile kernel.
    pub fn threads(&self) -> u32 {
        match self.kernel {
            Kernel::TileStages => self.params.count * WORKGROUP,
            _ => self.params.count,
        }
    }
}
