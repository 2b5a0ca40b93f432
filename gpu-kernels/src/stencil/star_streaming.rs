//! Beyond the book: the star stencils of order `R` (13 points for `R` = 2, 25 for `R` = 4) on
//! the streaming kernel's design (`streaming.rs`: 2.5D blocking after Micikevicius 2009). Each
//! thread owns `V` consecutive points of a row and walks a run of z planes; its z neighbours, `R`
//! on each side, rotate through a register queue of `2R + 1` planes (a ring for order 2, shifted
//! for order 4), so DRAM sees each plane once. The x and y neighbours of the current plane (whole
//! patches left and right, as many as hold `R` points, and `R` rows above and below) are read
//! straight from global memory, where neighbouring threads' loads have brought them into L1 and
//! L2. With `AHEAD` this halo is loaded one plane ahead of its use (its latency hidden by the
//! thread itself, at the cost of holding two planes' halos in registers), else in the iteration
//! that uses it (fewer registers, so more warps per SM hide it). No barriers, no shared memory;
//! 16-byte row loads; every read is clamped into the grid, so no load sits behind a branch.
//!
//! Where it waits, and the routes measured and not taken, are in docs/stencil-h200.md (the
//! sections of 2026-12-06): on an H100 the star25 `f64` warps stall on the queue's move of the
//! plane just loaded; loops without that move, the entering plane copied into shared memory by
//! `cp.async` and the patches beside taken from the lanes beside by warp shuffles all ran slower.
//! On Hopper a shuffle and a shared-memory access use the same L1 data pipe as the loads they
//! would replace, and a texture fetch uses it too, at half a load's bytes a cycle (a probe).
//!
//! In the Hopper build, `f64` runs keep the `2R` planes they share with the next run along z
//! (their last `R` and the `R` past them) in L2 until that run reads them, and their output leaves
//! L2 first (`device::l2`, as in `streaming.rs`). On an H200 at 512³ this took the star25 in `f64`
//! from 62.5 to 67.1 % of the copy: without the hints a 32-plane run's 8 shared planes were read
//! again from DRAM (24 % more reads). In `f32`, where L2 caught most of them (5 % more reads),
//! the hints cost 2 % (star25) and 0.7 % (star13), so `f32` loads and stores plainly
//! (docs/stencil-h200.md).
//!
//! Results are bitwise those of the CPU reference: the same formula (`StarCoeffs::apply`).

use super::Grid3;
use super::star::{Arm, StarCoeffs};
use super::streaming::{RunPolicies, ThreadWork, Walk, thread_work};
use super::tiles::{RING_QUEUE, SHAPE_PREFETCH};
use crate::Real;
use crate::device::{l2, load_vector, opaque, prefetch_l2, store_vector};

/// One time step of the order-`R` star; points within `R` of a face copy their input.
///
/// # Safety
/// `input` and `output` hold `grid.len()` elements each, start 16-byte aligned and do not
/// overlap; `V` is a power of two that divides `grid.nx`; the launch covers the x–y plane with
/// `V`-wide patches, one per thread, and `gridDim.z` blocks share the planes along z.
#[inline(always)]
pub unsafe fn stencil_star_streaming<
    T: Real,
    const R: usize,
    const V: usize,
    const QUEUE: usize,
    const AHEAD: bool,
>(
    input: *const T,
    output: *mut T,
    grid: Grid3,
    c: StarCoeffs<T, R>,
) {
    const { assert!(QUEUE == 2 * R + 1, "the z queue holds the plane and R on each side") };
    let Grid3 { nx, ny, nz } = grid;
    let Some(ThreadWork { k_start, j_start: j, i_start, i_end }) = thread_work(grid, V as u32, 1) else {
        return;
    };

    // Planes are clamped to the run and the `R` planes on each side of it, rows and columns to
    // the grid: a clamped value belongs to a point within `R` of a face, which keeps its input.
    // No plane asked for lies below `i_first` (the queue starts there), so in `f32` the clamp
    // is from above only: ptxas 13.5 issues 11 % fewer instructions a plane for the star25 (194
    // against 217, held to 128 registers by `ptx_build::REGISTER_CAPS`) and 6 % for the star13,
    // and on an H200 one step at 512³ took 1.2 % and 0.8 % less time, 200 star25 steps 1.7 %
    // (docs/stencil-h200.md, 2026-12-06 22:54). In `f64` this form took the one-row star25 from
    // 128 registers to 164.
    let (i_first, i_last) = (i_start.saturating_sub(R as u32), (i_end + R as u32 - 1).min(nz - 1));
    let clamp_plane = |i: u32| if size_of::<T>() == 4 { i.min(i_last) } else { i.clamp(i_first, i_last) };
    let plane = |i: u32| clamp_plane(i) as usize * grid.plane_stride();
    let row = |j: i64| j.clamp(0, ny as i64 - 1) as usize * grid.row_stride();
    let here = row(j as i64) + k_start as usize;
    // L2 eviction hints for 8-byte elements only (measured: see the module's docs).
    let hinted = size_of::<T>() == 8;
    let policies = RunPolicies::new(i_start, i_end, Walk::FORWARD);
    // SAFETY (loads): every offset lies in the grid; `k_start` is a multiple of `V`, which
    // divides `nx`, so a patch is `V` aligned elements of one row.
    let load_patch = |i: u32| -> [T; V] {
        let (at, policy) = (unsafe { input.add(plane(i) + here) }, policies.load_reaching(i, R as u32));
        unsafe { if hinted { l2::load(at, policy) } else { load_vector(at) } }
    };
    // The current plane's neighbours: the patches left and right of this one (as many as hold
    // `R` points; at the grid's ends a clamped patch stands in, whose values feed only points
    // within `R` of a face), and `R` rows above and below it, nearest first. Whole aligned
    // patches, not single points: one 16-byte load brings what `V` scalar loads would.
    let sides = R.div_ceil(V);
    let left_of = |n: usize| (k_start as i64 - ((n + 1) * V) as i64).max(0) as usize;
    let right_of = |n: usize| (k_start as usize + (n + 1) * V).min(nx as usize - V);
    let load_halo = |i: u32| {
        let at = plane(i) + row(j as i64);
        let rows_at = |d: i64| plane(i) + row(j as i64 + d) + k_start as usize;
        // SAFETY: as above; beyond `sides`, the last patch again (the same load).
        unsafe {
            (
                core::array::from_fn::<[T; V], R, _>(|n| {
                    load_vector(input.add(at + left_of(n.min(sides - 1))))
                }),
                core::array::from_fn::<[T; V], R, _>(|n| {
                    load_vector(input.add(at + right_of(n.min(sides - 1))))
                }),
                core::array::from_fn::<[T; V], R, _>(|d| load_vector(input.add(rows_at(-1 - d as i64)))),
                core::array::from_fn::<[T; V], R, _>(|d| load_vector(input.add(rows_at(1 + d as i64)))),
            )
        }
    };
    let interior = |v: u32, n: u32| v >= R as u32 && v + (R as u32) < n;
    let x_interior = patch_x_interior::<R, V>(k_start as usize, nx as usize);
    let y_interior = interior(j, ny);

    // The register queue along z, planes `i − R ..= i + R`, is a ring up to `RING_QUEUE` planes:
    // in the `p`-th iteration of every `QUEUE`, slot `(p + q) % QUEUE` holds plane `i − R + q`, so
    // the plane entering takes the slot of the one leaving and the queue advances without moving
    // registers (`ring_loop`). Longer queues shift instead: by `shift` planes after `shift` phases
    // (`p < shift`; see the loop below).
    let mut queue: [[T; V]; QUEUE] =
        core::array::from_fn(|q| load_patch((i_start + q as u32).saturating_sub(R as u32)));
    // With `AHEAD`, `halo` is the next plane's halo, loaded one iteration before its use.
    let mut halo = load_halo(i_start);
    let mut i = i_start;
    // Plane `i` in phase `$phase`.
    macro_rules! plane {
        ($phase:literal) => {{
            // Opaque, so that later phases' loads are not hoisted into this one (they would
            // hold registers across it).
            let i = opaque(i as i32) as u32;
            let slot = |q: usize| ($phase + q) % QUEUE;
            let current = if AHEAD { core::mem::replace(&mut halo, load_halo(i + 1)) } else { load_halo(i) };
            let entering = load_patch(i + R as u32 + 1);
            // SAFETY: the offset lies in the grid (clamped).
            unsafe { prefetch_l2(input.add(plane(i + R as u32 + 1 + SHAPE_PREFETCH as u32) + here)) };

            let (left, right, above, below) = current;
            let centre = queue[slot(R)];
            let z_interior = interior(i, nz);
            let out: [T; V] = core::array::from_fn(|e| {
                let value = patch_point(c, centre, [left, right, above, below], &queue, slot, e);
                if z_interior && y_interior && x_interior(e) { value } else { centre[e] }
            });
            // SAFETY: the row is in the grid (`j < ny`), so `here` is its unclamped offset.
            unsafe {
                let at = output.add(i as usize * grid.plane_stride() + here);
                if hinted { l2::store(at, out, policies.written) } else { store_vector(at, out) }
            };
            queue[slot(0)] = entering;
        }};
    }
    if QUEUE <= RING_QUEUE {
        // The phases of a queue of up to `RING_QUEUE` planes.
        ring_loop!(plane, i, i_end, QUEUE; 0 1 2 3 4);
    } else {
        // `shift` copies of the body, after which the queue shifts by `shift` planes (register
        // moves): `(QUEUE − shift) / shift` planes moved per plane instead of `QUEUE − 1`. Three
        // for `f32` rows of 4 points (the star25's `f32` default on the H200; 512³: 1.8 %
        // faster, 6 % fewer instructions, the same 128 registers), one elsewhere (three copies
        // took the `f64` kernels from 128 registers to 164, the narrower `f32` ones from 64–108
        // to 119–138).
        let shift = if size_of::<T>() == 4 && V == 4 { 3 } else { 1 };
        shift_loop!(plane, i, i_end, queue, QUEUE, shift; 0 1 2);
    }
}

/// Whether point `e` of the `V`-point patch starting at column `k` (a multiple of `V`, which
/// divides `nx`) lies more than `R` columns from both x faces. Where `V` divides `R` the answer is
/// the patch's alone, all or none of its points (the faces' `R` columns are whole patches), and
/// one predicate a plane keeps the patch's boundary where each point would need its own (an
/// array of `V` equal flags does not do: LLVM packs it into one word and tests each byte).
#[inline(always)]
pub(super) fn patch_x_interior<const R: usize, const V: usize>(
    k: usize,
    nx: usize,
) -> impl Fn(usize) -> bool + Copy {
    let interior = move |v: usize| v >= R && v + R < nx;
    let patch = interior(k);
    move |e| if R.is_multiple_of(V) { patch } else { interior(k + e) }
}

/// The order-`R` star at point `e` of a thread's patch of `V` points (`centre`, the plane `R` of
/// its z queue `queue`, whose plane `q` is in slot `slot(q)`): its x neighbours from the patch and
/// the patches beside it (`left`, `right`; the `n`-th patch away at index `n`), its y neighbours
/// from the `R` rows above and below, its z neighbours from the queue, nearest first. Shared by
/// the kernels that find the x–y patches in global and in shared memory.
#[inline(always)]
pub(super) fn patch_point<T: Real, const R: usize, const V: usize, const QUEUE: usize>(
    c: StarCoeffs<T, R>,
    centre: [T; V],
    [left, right, above, below]: [[[T; V]; R]; 4],
    queue: &[[T; V]; QUEUE],
    slot: impl Fn(usize) -> usize,
    e: usize,
) -> T {
    let x = x_arm(centre, &left, &right, e);
    let y = Arm { minus: core::array::from_fn(|d| above[d][e]), plus: core::array::from_fn(|d| below[d][e]) };
    let z = Arm {
        minus: core::array::from_fn(|d| queue[slot(R - 1 - d)][e]),
        plus: core::array::from_fn(|d| queue[slot(R + 1 + d)][e]),
    };
    c.apply(centre[e], x, y, z)
}

/// The x neighbours of point `e` of a patch of `V` points (`centre`): within the patch, and
/// beyond its ends in the patches beside it (`left`, `right`; the `n`-th patch away at index
/// `n`), nearest first.
#[inline(always)]
pub(super) fn x_arm<T: Real, const R: usize, const V: usize>(
    centre: [T; V],
    left: &[[T; V]; R],
    right: &[[T; V]; R],
    e: usize,
) -> Arm<T, R> {
    Arm {
        // `o` points beyond the patch's end: the `o / V`-th patch beside it.
        minus: core::array::from_fn(|d| match d.checked_sub(e) {
            None => centre[e - 1 - d],
            Some(o) => left[o / V][V - 1 - o % V],
        }),
        plus: core::array::from_fn(|d| match (e + 1 + d).checked_sub(V) {
            None => centre[e + 1 + d],
            Some(o) => right[o / V][o % V],
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::patch_x_interior;

    /// The patch's predicate equals each point's own test, for the orders and vectors built
    /// (uniform where `V` divides `R`), at every patch of rows from the thinnest up.
    fn patches_agree_with_their_points<const R: usize, const V: usize>() {
        for nx in (V..=12 * V).step_by(V).filter(|&nx| nx > 2 * R) {
            for k in (0..nx).step_by(V) {
                let patch = patch_x_interior::<R, V>(k, nx);
                for e in 0..V {
                    let own = k + e >= R && k + e + R < nx;
                    assert_eq!(patch(e), own, "R {R} V {V} nx {nx} k {k} e {e}");
                }
            }
        }
    }

    #[test]
    fn a_patch_is_interior_exactly_where_its_points_are() {
        patches_agree_with_their_points::<1, 1>();
        patches_agree_with_their_points::<2, 2>();
        patches_agree_with_their_points::<2, 4>();
        patches_agree_with_their_points::<4, 2>();
        patches_agree_with_their_points::<4, 4>();
        patches_agree_with_their_points::<1, 4>();
    }
}
