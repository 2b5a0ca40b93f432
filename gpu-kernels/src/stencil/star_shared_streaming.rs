//! Beyond the book: the order-`R` star on the streaming design with its x–y halo from shared
//! memory (Micikevicius, "3D finite difference computation on GPUs using CUDA", 2009, whose
//! kernel is this 25-point star). As in `star_streaming.rs`, each thread owns `V` consecutive
//! points of a row and walks a run of z planes, its z neighbours in a register queue of `2R + 1`
//! planes. What changes is where the current plane's x and y neighbours come from: the block
//! keeps a ring of [`HaloRing::PLANES`] tiles of the plane in shared memory, each `BX · V + 2P`
//! wide and `BY + 2R` tall (`P`: `R` rounded up to whole patches), so a neighbour is one 16-byte
//! shared load at a constant offset from the thread's own, where `star_streaming.rs` spends a
//! global load and a 64-bit address on each (the 25-point `f32` kernel there is issue-bound).
//!
//! Each plane `i`: every thread stores its own patch of plane `i + 1` (from its queue) and the
//! halo patches it loaded a plane before into the ring's next tile, starts the global loads of
//! plane `i + 2`'s halo patches, waits at the block's barrier, and computes plane `i` from the
//! ring's current tile. With three tiles one barrier per plane suffices: the tile written in
//! plane `i` was last read in plane `i − 2`, before the barrier of plane `i − 1`. Every thread
//! of the block takes part (the barrier), those past the grid's edge with clamped reads and no
//! store.
//!
//! Measured on an H200 at 512³ (docs/stencil-h200.md), it is not the default: the 25-point `f32`
//! kernel issues 179 instructions a plane instead of 216, but waits at the barrier (blocks of
//! 32×8 threads: 390–405 µs a step in the sustained sweep, against 358–366 for the default; 32×16,
//! one block per SM, 452–456); in `f64` one step takes as long as the default's (32×8: 0.7582–
//! 0.7587 ms against 0.7572–0.7575, three rounds), as the ring moves the L2 traffic (91 → 79 % in
//! `ncu`) to the shared-memory pipe (L1/TEX 84 → 87 %), which then bounds it: sixteen neighbours
//! of 8 bytes per point pass through it either way.
//!
//! Results are bitwise those of the CPU reference: the same formula (`StarCoeffs::apply`).

use super::Grid3;
use super::star::StarCoeffs;
use super::star_streaming::{patch_point, patch_x_interior};
use super::streaming::{RunPolicies, Walk};
use super::tiles::HaloRing;
use crate::Real;
use crate::device::thread::*;
use crate::device::{SharedArray, l2, load_vector, opaque, prefetch_l2, store_vector};

/// One time step of the order-`R` star; points within `R` of a face copy their input.
///
/// # Safety
/// `input` and `output` hold `grid.len()` elements each, start 16-byte aligned and do not
/// overlap; `V` is a power of two that divides `grid.nx`; the launch has blocks of `BX × BY`
/// threads covering the x–y plane with `V`-wide patches, `gridDim.z` blocks sharing the planes
/// along z, and [`HaloRing::shared_bytes`] of shared memory; `HALO` is the ring's
/// [`HaloRing::patches_per_thread`]; the grid [`HaloRing::fits`] the kernel.
#[inline(always)]
pub unsafe fn stencil_star_shared_streaming<
    T: Real,
    const R: usize,
    const V: usize,
    const QUEUE: usize,
    const BX: usize,
    const BY: usize,
    const HALO: usize,
>(
    input: *const T,
    output: *mut T,
    grid: Grid3,
    c: StarCoeffs<T, R>,
) {
    const { assert!(QUEUE == 2 * R + 1, "the z queue holds the plane and R on each side") };
    let ring = HaloRing { order: R, vector: V, block: [BX, BY] };
    const {
        let ring = HaloRing { order: R, vector: V, block: [BX, BY] };
        assert!(HALO == ring.patches_per_thread(), "HALO is the ring's patches per thread");
    };
    let Grid3 { nx, ny, nz } = grid;
    let (tx, ty) = (thread_idx_x() as usize, thread_idx_y() as usize);
    let (k0, j0) = (block_idx_x() as usize * BX * V, block_idx_y() as usize * BY);
    let planes = nz.div_ceil(grid_dim_z());
    let i_start = block_idx_z() * planes;
    if i_start >= nz {
        // The whole block: `gridDim.z` runs may be more than the planes fill.
        return;
    }
    let i_end = (i_start + planes).min(nz);
    let (k, j) = (k0 + tx * V, j0 + ty);
    let inside = k < nx as usize && j < ny as usize;

    // Planes are clamped to the run and the `R` planes on each side of it, rows and columns to
    // the grid: a clamped value belongs to a point within `R` of a face, which keeps its input.
    // The planes loaded in the loop lie past the run's start, so they clamp at its end only.
    let (i_first, i_last) = (i_start.saturating_sub(R as u32), (i_end + R as u32 - 1).min(nz - 1));
    let ahead = |i: u32| i.min(i_last);
    let at_in_plane = |row: usize, column: usize| {
        row.min(ny as usize - 1) * grid.row_stride() + column.min(nx as usize - V)
    };
    let here = at_in_plane(j, k);
    // A point of plane `i`: one 32 × 32 → 64-bit multiply-add from the point in plane 0 (a
    // plane is under `HaloRing::MAX_PLANE_BYTES`).
    let plane_bytes = (grid.plane_stride() * size_of::<T>()) as u32;
    let in_plane =
        |at: *const T, i: u32| at.wrapping_byte_add((u64::from(i) * u64::from(plane_bytes)) as usize);
    let (input_here, output_here) = (input.wrapping_add(here), output.wrapping_add(here));
    let hinted = size_of::<T>() == 8;
    let policies = RunPolicies::new(i_start, i_end, Walk::FORWARD);
    // SAFETY (loads): every offset lies in the grid; columns are multiples of `V`, which
    // divides `nx`, so a patch is `V` aligned elements of one row.
    let load_patch = |i: u32| -> [T; V] {
        let (at, policy) = (in_plane(input_here, i), policies.load_reaching(i, R as u32));
        unsafe { if hinted { l2::load(at, policy) } else { load_vector(at) } }
    };

    // The halo patches this thread moves into the ring each plane: where each lies in a tile of
    // the ring, and in a plane of the grid (`None` past the ring's patches).
    let id = ty * BX + tx;
    let halo_at: [Option<(usize, *const T)>; HALO] = core::array::from_fn(|h| {
        let (tile_row, tile_column) = ring.halo_patch(id + h * BX * BY)?;
        // Row `tile_row` of the tile is grid row `j0 + tile_row − R`, column `c` grid column
        // `k0 + c − P`; before the grid's start, clamped to row or column 0.
        let row = (j0 + tile_row).saturating_sub(R);
        let column = (k0 + tile_column).saturating_sub(ring.side());
        Some((tile_row * ring.row_len() + tile_column, input.wrapping_add(at_in_plane(row, column))))
    });
    let load_halo = |i: u32| -> [[T; V]; HALO] {
        // SAFETY: as for `load_patch`.
        core::array::from_fn(|h| match halo_at[h] {
            Some((_, at)) => unsafe { load_vector(in_plane(at, i)) },
            None => [T::default(); V],
        })
    };
    // SAFETY: the launch provides the ring; each element is written by one thread per tile,
    // and the barrier orders writes and reads as the module's comment says.
    let tiles: [SharedArray<T>; HaloRing::PLANES] =
        core::array::from_fn(|t| unsafe { SharedArray::at_offset(t * ring.plane_len()) });
    let own = (R + ty) * ring.row_len() + ring.side() + tx * V;
    let fill = |tile: SharedArray<T>, patch: [T; V], halo: [[T; V]; HALO]| unsafe {
        tile.write_vector(own, patch);
        for (h, patch) in halo.into_iter().enumerate() {
            if let Some((in_tile, _)) = halo_at[h] {
                tile.write_vector(in_tile, patch);
            }
        }
    };

    let interior = |v: usize, n: u32| v >= R && v + R < n as usize;
    let x_interior = patch_x_interior::<R, V>(k, nx as usize);
    let y_interior = interior(j, ny);
    let z_interior = |i: u32| i >= R as u32 && i + (R as u32) < nz;

    // The register queue along z, planes `i − R ..= i + R`; in phase `p` of every three, slot
    // `(p + q) % QUEUE` holds plane `i − R + q`, and after three phases the queue shifts by
    // three, as the ring's tiles come round.
    let mut queue: [[T; V]; QUEUE] = core::array::from_fn(|q| {
        load_patch((i_start + q as u32).wrapping_sub(R as u32).clamp(i_first, i_last))
    });
    fill(tiles[0], queue[R], load_halo(i_start));
    let mut halo = load_halo(ahead(i_start + 1));
    let mut i = i_start;
    // Plane `i` in phase `$phase`: its tile is `tiles[$phase]`, plane `i + 1`'s the next.
    macro_rules! plane {
        ($phase:literal) => {{
            // Opaque, so that later phases' loads are not hoisted into this one.
            let i = opaque(i as i32) as u32;
            let slot = |q: usize| ($phase + q) % QUEUE;
            fill(tiles[($phase + 1) % HaloRing::PLANES], queue[slot(R + 1)], halo);
            halo = load_halo(ahead(i + 2));
            let entering = load_patch(ahead(i + R as u32 + 1));
            // SAFETY: the address lies in the grid (clamped).
            unsafe { prefetch_l2(in_plane(input_here, ahead(i + R as u32 + 2))) };
            sync_threads();

            let tile = tiles[$phase];
            // SAFETY: the neighbours lie in the tile; the barrier above ordered their writes.
            let read = |offset: isize| unsafe { tile.read_vector::<V>(own.wrapping_add_signed(offset)) };
            let sides = ring.side() / V;
            let row = ring.row_len() as isize;
            let left: [[T; V]; R] = core::array::from_fn(|n| read(-(((n.min(sides - 1) + 1) * V) as isize)));
            let right: [[T; V]; R] = core::array::from_fn(|n| read(((n.min(sides - 1) + 1) * V) as isize));
            let above: [[T; V]; R] = core::array::from_fn(|d| read(-(d as isize + 1) * row));
            let below: [[T; V]; R] = core::array::from_fn(|d| read((d as isize + 1) * row));
            let centre = queue[slot(R)];
            let z_interior = z_interior(i);
            let out: [T; V] = core::array::from_fn(|e| {
                let value = patch_point(c, centre, [left, right, above, below], &queue, slot, e);
                if z_interior && y_interior && x_interior(e) { value } else { centre[e] }
            });
            if inside {
                // SAFETY: the patch is in the grid, so `here` is its unclamped offset.
                unsafe {
                    let at = in_plane(output_here, i).cast_mut();
                    if hinted { l2::store(at, out, policies.written) } else { store_vector(at, out) }
                };
            }
            queue[slot(0)] = entering;
        }};
    }
    shift_loop!(plane, i, i_end, queue, QUEUE, HaloRing::PLANES; 0 1 2);
}
