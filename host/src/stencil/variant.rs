//! The stencil kernels (the book's four and the streaming kernel) and their launch shapes,
//! derived from the constants in `gpu_kernels::stencil::tiles`.

use cudarc::driver::LaunchConfig;
use gpu_kernels::stencil::Grid3;
use gpu_kernels::stencil::tiles::{
    BASIC_BLOCK, COARSENED_IN_TILE_DIM, COARSENED_SWEEP, REGISTER_TILED_IN_TILE_DIM, REGISTER_TILED_SWEEP,
    SHARED_TILED_IN_TILE_DIM, out_tile_dim,
};

use crate::{Error, Precision, Result};

/// Largest grid extent along y and z of a CUDA launch.
pub(crate) const MAX_GRID_YZ: u32 = 65_535;

/// One of PMPP chapter 8's stencil kernels, or the streaming kernel beyond the book.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum StencilVariant {
    /// Fig. 8.6: one thread per point.
    Basic,
    /// Fig. 8.8: `T³` tile in shared memory, `T = 8`.
    SharedTiled,
    /// Fig. 8.10: coarsened along z, three planes in shared memory, `T = 32`.
    Coarsened,
    /// Fig. 8.12: coarsened along z, one plane in shared memory, z neighbours in registers.
    RegisterTiled,
    /// Beyond the book: 2.5D streaming along z, z neighbours in registers, x–y neighbours
    /// from L1/L2, 16-byte vector loads, no barriers. The fastest single step.
    Streaming,
    /// Beyond the book: temporal blocking, `K` time steps per pass over the grid (2.5D
    /// streaming with a register queue per time level, overlapping tiles). The fastest for
    /// many steps: use this one for speed; a single step runs the streaming kernel.
    Temporal,
}

impl StencilVariant {
    /// All variants: the book's, in its order, then the streaming and temporal kernels.
    pub const ALL: [Self; 6] = [
        Self::Basic,
        Self::SharedTiled,
        Self::Coarsened,
        Self::RegisterTiled,
        Self::Streaming,
        Self::Temporal,
    ];

    /// The name used on the command line and in reports (`shared-tiled`).
    pub fn name(self) -> &'static str {
        match self {
            Self::Basic => "basic",
            Self::SharedTiled => "shared-tiled",
            Self::Coarsened => "coarsened",
            Self::RegisterTiled => "register-tiled",
            Self::Streaming => "streaming",
            Self::Temporal => "temporal",
        }
    }

    /// The book's figure (for the kernels beyond the book, their idea: 2.5D blocking, and
    /// temporal blocking).
    pub fn figure(self) -> &'static str {
        match self {
            Self::Basic => "Fig. 8.6",
            Self::SharedTiled => "Fig. 8.8",
            Self::Coarsened => "Fig. 8.10",
            Self::RegisterTiled => "Fig. 8.12",
            Self::Streaming => "2.5D",
            Self::Temporal => "2.5D × K",
        }
    }

    /// The input-tile edge `T` of the main entry point (the basic kernel and those beyond the
    /// book have none: 0).
    pub fn default_tile(self) -> usize {
        match self {
            Self::Basic | Self::Streaming | Self::Temporal => 0,
            Self::SharedTiled => SHARED_TILED_IN_TILE_DIM,
            Self::Coarsened => COARSENED_IN_TILE_DIM,
            Self::RegisterTiled => REGISTER_TILED_IN_TILE_DIM,
        }
    }

    /// Every tile edge with an entry point: the default, plus the tiling sweep's. None for the
    /// streaming kernel, whose shapes are [`StreamingShape`](gpu_kernels::stencil::tiles::StreamingShape)s
    /// (see [`streaming`](super::streaming)); nor for the temporal kernel (see
    /// [`temporal`](super::temporal)).
    pub fn tiles(self) -> &'static [usize] {
        match self {
            Self::Basic => &[0],
            Self::Streaming | Self::Temporal => &[],
            Self::SharedTiled => &[SHARED_TILED_IN_TILE_DIM],
            Self::Coarsened => &COARSENED_SWEEP,
            Self::RegisterTiled => &REGISTER_TILED_SWEEP,
        }
    }

    /// The PTX entry point for elements of type `precision`; for the streaming kernel, that of
    /// its default shape, which grids with rows of odd length replace by a narrower one
    /// ([`streaming::fit`](super::streaming::fit)); for the temporal kernel, that of its default
    /// depth.
    pub fn entry_point(self, precision: Precision) -> String {
        match self {
            Self::Streaming => {
                super::streaming::entry_point(super::streaming::default_shape(precision), precision)
                    .expect("the default streaming shape is built")
            }
            Self::Temporal => {
                super::temporal::entry_point(super::temporal::default_shape(precision), precision)
                    .expect("the default temporal shape is built")
            }
            _ => format!("stencil7_{}_{}", self.name().replace('-', "_"), precision.name()),
        }
    }

    /// The PTX entry point built with input-tile edge `tile` (one of [`tiles`](Self::tiles)).
    pub fn entry_point_with_tile(self, precision: Precision, tile: usize) -> Result<String> {
        if !self.tiles().contains(&tile) {
            return Err(Error::BadArgument(format!(
                "the {self} kernel is built with tile edges {:?}, not {tile}",
                self.tiles()
            )));
        }
        Ok(if tile == self.default_tile() {
            self.entry_point(precision)
        } else {
            format!("stencil7_{}_t{tile}_{}", self.name().replace('-', "_"), precision.name())
        })
    }

    /// Grid, block and shared-memory size for `grid` with elements of `precision`.
    pub fn launch_config(self, grid: Grid3, precision: Precision) -> Result<LaunchConfig> {
        self.launch_config_with_tile(grid, precision, self.default_tile())
    }

    /// As [`launch_config`](Self::launch_config), for the entry point of input-tile edge `tile`.
    pub fn launch_config_with_tile(
        self,
        grid: Grid3,
        precision: Precision,
        tile: usize,
    ) -> Result<LaunchConfig> {
        let tiles = |out_tile: usize| {
            let out_tile = out_tile as u32;
            (grid.nx.div_ceil(out_tile), grid.ny.div_ceil(out_tile), grid.nz.div_ceil(out_tile))
        };
        let plane = |t: usize| (t as u32, t as u32, 1);
        let t = tile;
        let (grid_dim, block_dim, shared_elements) = match self {
            Self::Basic => {
                let [bx, by, bz] = BASIC_BLOCK;
                ((grid.nx.div_ceil(bx), grid.ny.div_ceil(by), grid.nz.div_ceil(bz)), (bx, by, bz), 0)
            }
            Self::SharedTiled => (tiles(out_tile_dim(t)), (t as u32, t as u32, t as u32), t * t * t),
            Self::Coarsened => (tiles(out_tile_dim(t)), plane(t), 3 * t * t),
            Self::RegisterTiled => (tiles(out_tile_dim(t)), plane(t), t * t),
            // The default shape fitted to the rows, on a GPU that would hold every block at once;
            // `StencilProblem::run` launches it from the GPU's SM count and resident blocks
            // (`streaming::fill`, `streaming::launch`).
            Self::Streaming => {
                let shape =
                    super::streaming::fit(super::streaming::default_shape(precision), grid, precision);
                return super::streaming::launch_config(shape, grid, usize::MAX);
            }
            // One run along z per column; `StencilProblem::run` splits the columns into runs
            // from the GPU's resident blocks (`temporal::runs`).
            Self::Temporal => {
                return super::temporal::launch_config(
                    super::temporal::default_shape(precision),
                    grid,
                    precision,
                    1,
                );
            }
        };
        if grid_dim.1 > MAX_GRID_YZ || grid_dim.2 > MAX_GRID_YZ {
            return Err(Error::BadShape(format!(
                "the {} kernel would need {}×{} blocks along y×z for a {}×{}×{} grid, over CUDA's limit of {MAX_GRID_YZ}",
                self.name(),
                grid_dim.1,
                grid_dim.2,
                grid.nz,
                grid.ny,
                grid.nx
            )));
        }
        Ok(LaunchConfig {
            grid_dim,
            block_dim,
            shared_mem_bytes: (shared_elements * precision.bytes()) as u32,
        })
    }
}

named_on_the_command_line!(StencilVariant, "stencil variant");

#[cfg(test)]
mod tests {
    use super::*;

    const CUBE_512: Grid3 = Grid3 { nx: 512, ny: 512, nz: 512 };

    #[test]
    fn entry_points_follow_the_naming_scheme() {
        assert_eq!(StencilVariant::SharedTiled.entry_point(Precision::F64), "stencil7_shared_tiled_f64");
        assert_eq!(StencilVariant::RegisterTiled.entry_point(Precision::F32), "stencil7_register_tiled_f32");
    }

    #[test]
    fn sweep_entry_points_and_shapes() {
        let v = StencilVariant::RegisterTiled;
        assert_eq!(v.entry_point_with_tile(Precision::F32, 8).unwrap(), "stencil7_register_tiled_t8_f32");
        assert_eq!(v.entry_point_with_tile(Precision::F64, 32).unwrap(), "stencil7_register_tiled_f64");
        assert!(v.entry_point_with_tile(Precision::F32, 12).unwrap_err().to_string().contains("not 12"));
        let t16 = v.launch_config_with_tile(CUBE_512, Precision::F32, 16).unwrap();
        assert_eq!(
            (t16.block_dim, t16.grid_dim, t16.shared_mem_bytes),
            ((16, 16, 1), (37, 37, 37), 16 * 16 * 4)
        );
    }

    #[test]
    fn names_round_trip() {
        for v in StencilVariant::ALL {
            assert_eq!(v.name().parse::<StencilVariant>().unwrap(), v);
        }
        assert_eq!("register_tiled".parse::<StencilVariant>().unwrap(), StencilVariant::RegisterTiled);
        assert!("tiled".parse::<StencilVariant>().unwrap_err().to_string().contains("basic, shared-tiled"));
    }

    #[test]
    fn launch_shapes_come_from_the_tile_constants() {
        let tiled = StencilVariant::SharedTiled.launch_config(CUBE_512, Precision::F32).unwrap();
        assert_eq!(tiled.block_dim, (8, 8, 8));
        assert_eq!(tiled.grid_dim, (86, 86, 86)); // ceil(512 / 6)
        assert_eq!(tiled.shared_mem_bytes, 8 * 8 * 8 * 4);

        let coarsened = StencilVariant::Coarsened.launch_config(CUBE_512, Precision::F64).unwrap();
        assert_eq!(coarsened.block_dim, (32, 32, 1));
        assert_eq!(coarsened.grid_dim, (18, 18, 18)); // ceil(512 / 30)
        assert_eq!(coarsened.shared_mem_bytes, 3 * 32 * 32 * 8);

        let register = StencilVariant::RegisterTiled.launch_config(CUBE_512, Precision::F32).unwrap();
        assert_eq!(register.shared_mem_bytes, 32 * 32 * 4);

        let basic =
            StencilVariant::Basic.launch_config(Grid3 { nx: 33, ny: 5, nz: 9 }, Precision::F32).unwrap();
        assert_eq!(basic.grid_dim, (2, 2, 3));
        assert_eq!(basic.shared_mem_bytes, 0);
    }

    #[test]
    fn grids_past_the_launch_limit_are_refused() {
        let tall = Grid3 { nx: 3, ny: 3, nz: 400_000 };
        let err = StencilVariant::SharedTiled.launch_config(tall, Precision::F32).unwrap_err().to_string();
        assert!(err.contains("over CUDA's limit"), "{err}");
        assert!(StencilVariant::RegisterTiled.launch_config(tall, Precision::F32).is_ok());
    }
}
