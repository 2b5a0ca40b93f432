//! Tile sizes, block shapes and coarsening of the stencil kernels: the one place they are
//! written. The host derives grid, block and shared-memory sizes from these.

/// Fig. 8.6: block shape `[x, y, z]` of the basic kernel (one thread per point).
pub const BASIC_BLOCK: [u32; 3] = [32, 4, 4];

/// Fig. 8.8: edge `T` of the input tile of the shared-memory tiled kernel; a block is
/// `T³` threads, so `T = 8` is the largest cube within 1024 threads.
pub const SHARED_TILED_IN_TILE_DIM: usize = 8;

/// Fig. 8.10: edge `T` of the input plane of the z-coarsened kernel; a block is `T²`
/// threads and each thread sweeps `T - 2` output planes along z.
pub const COARSENED_IN_TILE_DIM: usize = 32;

/// Fig. 8.12: edge `T` of the input plane of the coarsened, register-tiled kernel.
pub const REGISTER_TILED_IN_TILE_DIM: usize = 32;

/// Input-tile edges of the register-tiled kernel in the benchmarks' tiling sweep.
pub const REGISTER_TILED_SWEEP: [usize; 3] = [8, 16, REGISTER_TILED_IN_TILE_DIM];

/// Input-tile edges of the coarsened kernel in the benchmarks' tiling sweep.
pub const COARSENED_SWEEP: [usize; 2] = [16, COARSENED_IN_TILE_DIM];

/// Edge of the output tile for an input tile of edge `in_tile_dim`: one halo point on
/// each side (the seven-point stencil has order 1).
pub const fn out_tile_dim(in_tile_dim: usize) -> usize {
    in_tile_dim - 2
}
