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

/// The const generics of one streaming kernel entry point (`streaming.rs`): see
/// [`STREAMING_KERNELS_F32`](super::STREAMING_KERNELS_F32) for the ones built.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct StreamingKernel {
    /// Consecutive x points per thread, loaded and stored as one vector (elements).
    pub vector: usize,
    /// Consecutive y rows per thread.
    pub rows: usize,
    /// Planes held in registers beyond the next one, their loads in flight (0: the next only).
    /// For the high-order stars, how the x–y halo is staged: 0 loaded in the iteration that
    /// uses it, 1 a plane ahead in registers (with two rows a thread, the y arm's rows only),
    /// [`HALO_IN_SHARED`] a plane ahead through a ring of shared-memory tiles
    /// (`star_shared_streaming.rs`), [`HALO_BY_TENSOR_COPY`] by tensor copies into such a ring
    /// (`star_tensor_streaming.rs`).
    pub ahead: usize,
    /// How many planes beyond the register queue each thread prefetches into L2 (0: none).
    pub prefetch: usize,
}

/// The longest z queue the stars' streaming kernels (`star_streaming.rs`,
/// `star_rows_streaming.rs`) keep as a ring of registers; longer queues shift. The ring saves the
/// queue's register moves, but its `QUEUE` copies of the body cost registers: for order 4 (nine
/// planes) ptxas held 168 per thread against 108 (`f32`, 4 points a thread) for one copy of the
/// body that shifts the queue, which ran 4 % faster (H200, 512³); in `f64` (2 points a thread) a
/// ring of nine took 186 registers against 128 and 27 % longer (H100, 2026-12-06). So order 2
/// (five planes) rings and order 4 shifts.
pub const RING_QUEUE: usize = 5;

/// The axis a streaming kernel walks; its blocks tile the grid across it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum StreamAxis {
    /// Along z, the book's way: blocks tile the x–y plane.
    Z,
    /// Along y: blocks tile the x–z cross-section, a thread's rows are z planes. Only the
    /// seven-point kernel walks this way.
    Y,
}

/// A launch shape of the streaming kernel: the entry point, and the block shape, planes per
/// block and axis chosen at launch.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct StreamingShape {
    pub kernel: StreamingKernel,
    /// Threads per block along x and across the walk (y, or z when walking along y).
    pub block: [u32; 2],
    /// Planes per block along the walk, or [`IN_WAVES`].
    pub planes: u32,
    /// The axis the blocks walk.
    pub axis: StreamAxis,
    /// Blocks launched together as one thread-block cluster, consecutive along the launch's
    /// rows of tiles (`blockIdx.y`), or [`NO_CLUSTER`]. Compute capability 9.0 runs a cluster's
    /// blocks at once on one GPC, so blocks that read each other's halo rows do so from one GPC
    /// (which did not make the H200's L2 fabric any less busy: [`NO_CLUSTER`]); the kernels do
    /// not change. A launch takes the largest size
    /// up to this one that divides its rows of tiles (so the grid is never padded), and GPUs
    /// without clusters launch the same blocks plainly.
    pub cluster: u32,
}

/// [`StreamingShape::cluster`] of a plain launch: each block on its own. Every default but the
/// star13's ([`CLUSTER_PAIR`]) is plain: on the H200 no cluster size beat it (docs/stencil-h200.md,
/// 2026-12-05). Clusters count fewer resident blocks (240 of 256 in clusters of 8), so a launch in
/// waves holds fewer, and with the blocks fixed L2's fabric stayed as busy for as long.
pub const NO_CLUSTER: u32 = 1;

/// The largest [`StreamingShape::cluster`]: the portable cluster size of CUDA (larger ones
/// need a kernel attribute and are not portable across GPUs).
pub const MAX_CLUSTER: u32 = 8;

/// [`StreamingShape::cluster`] of the star13's defaults: two blocks neighbouring along y. In runs
/// of [`RUN_PLANES`] (several waves), the pair ran one step at 512³ 1.7 % faster in `f32` and 1.5 %
/// in `f64` than plain launches on an H200 (three alternating rounds; criterion's sustained steps
/// 0.4–1.1 %; docs/stencil-h200.md, 2026-12-05 04:20); pairs made the star25 in `f32` and the
/// box, launched in one wave, 0.5–2.9 % slower.
pub const CLUSTER_PAIR: u32 = 2;

/// Cluster sizes the benchmarks' sweeps hold each default shape in.
pub const CLUSTER_SWEEP: [u32; 3] = [CLUSTER_PAIR, 4, MAX_CLUSTER];

/// [`StreamingShape::planes`] of the seven-point kernel launched as one wave: when the GPU holds
/// a block for every tile of a plane at once, each column of tiles is walked whole by one block
/// (or split into as many runs as fill the GPU). Every block is then resident from start to end
/// and all walk down z together: no plane is read twice from DRAM (no run's neighbour along z
/// starts a wave later) and no block starts late (no last, partial wave). When the tiles
/// outnumber the resident blocks, runs of [`StreamingKernel::run_planes`] planes instead
/// ([`RUN_PLANES`], or [`TENSOR_RUN_PLANES`] for tiles by tensor copies): launching the rows of
/// tiles in bands of one wave each was slower on an H200 (docs/stencil-h200.md).
pub const IN_WAVES: u32 = 0;

/// Planes per block of a shape [`IN_WAVES`] on a grid whose tiles outnumber the resident blocks.
pub const RUN_PLANES: u32 = 32;

/// [`RUN_PLANES`] for the tiles by tensor copies ([`HALO_BY_TENSOR_COPY`]): each run reads the
/// `2R` planes beyond its ends too (8 more for 32 planes of the star25, 25 %; 6 % for 128), and
/// fewer blocks fill and drain their rings. On an H200 (2026-12-07, calls 10–12 of the 16:43
/// session on one machine, the same binary, `stencil --launch "32x4 v2 r4 a3 p0 zN"`,
/// 256×512×1024 in `f64`, whose 512 tiles are more than its 264 resident blocks) one step took
/// 0.7388–0.7393 ms in runs of 32 planes, 0.6983 / 0.6987 in runs of 64 and 0.6776 in runs of
/// 128 (74.9 % of the copy), 8.3 % less than 32; on an H100 runs of 64 took 3.5 % less than 32
/// there (0.8559–0.8593 ms against 0.8876–0.8883; its table names runs of 32).
pub const TENSOR_RUN_PLANES: u32 = 128;

impl StreamingKernel {
    /// Planes per block of a launch [`IN_WAVES`] of this kernel whose tiles outnumber the
    /// resident blocks: [`TENSOR_RUN_PLANES`] by tensor copies, else [`RUN_PLANES`].
    pub const fn run_planes(self) -> u32 {
        if self.ahead == HALO_BY_TENSOR_COPY { TENSOR_RUN_PLANES } else { RUN_PLANES }
    }
}

impl StreamingShape {
    /// Points one block updates per plane along x (in 64 bits, saturating: any shape has a count).
    pub const fn block_points_x(self) -> u64 {
        (self.block[0] as u64).saturating_mul(self.kernel.vector as u64)
    }

    /// Rows one block updates per plane along y (as [`block_points_x`](Self::block_points_x)).
    pub const fn block_points_y(self) -> u64 {
        (self.block[1] as u64).saturating_mul(self.kernel.rows as u64)
    }

    /// This shape with another vector width (for rows whose length it does not divide).
    pub const fn with_vector(self, vector: usize) -> Self {
        Self { kernel: StreamingKernel { vector, ..self.kernel }, ..self }
    }

    /// This shape launched in clusters of `cluster` blocks ([`StreamingShape::cluster`]).
    pub const fn with_cluster(self, cluster: u32) -> Self {
        Self { cluster, ..self }
    }
}

/// How much of L2 (percent) the seven-point streaming kernel's output keeps at the end of each
/// time step of a run of steps launched in one wave, in `f64`: each run of planes stores its last
/// planes, as many as that share holds, at L2's normal priority instead of first-evicted, and the
/// next step walks the other way, reading them first from L2 instead of DRAM. Chosen on an H200
/// (2026-12-01): at 256×512×1024, 100 steps ran at 91.0–92.9 % of the copy with 25 %, 91.2–92.3
/// with 50, 90.3 with 75, 90.9 with 100, against 89.4–90.4 keeping none, and criterion 90.6–90.7
/// against 89.5; at 512³ the same within noise (docs/stencil-h200.md).
pub const KEPT_L2_PERCENT_F64: u32 = 25;

/// As [`KEPT_L2_PERCENT_F64`], for `f32`: none. Keeping 25 % was slower in the same runs (100
/// steps: 95.5 % of the copy against 96.9 at 256×512×1024, 96.0 against 97.4 at 512³; criterion
/// 0.6–0.8 points slower).
pub const KEPT_L2_PERCENT_F32: u32 = 0;

/// Blocks per SM that the library's streaming launch gives at least, lowering the planes per
/// block on grids too small for the default shape to fill the GPU (e.g. 128³: from 32 blocks
/// to 512). Small grids are latency-bound, and two resident blocks per SM hide more of it.
pub const STREAMING_MIN_BLOCKS_PER_SM: u32 = 2;

/// The streaming kernel's default shape for `f32`: 16-byte rows (4 points), one row per
/// thread, no extra register planes, the plane after the register queue prefetched into L2,
/// 128×4 threads (a tile of 512 × 4 points), launched [`IN_WAVES`]. Chosen by
/// `tune_streaming --planes 32,waves` on an H200 (2026-12-01, 124 shapes per grid): 97.0 % of the
/// copy at 512³ and 96.5 % at 256×512×1024, the best worst case of the two (the former default,
/// 32×16 threads with runs of 32 planes, 95.5 % and 96.0 %); 98.2 % at 128³ and 88.9 % at
/// 256×512×2048 (4 MiB planes, 90.7 % for the best shape there; docs/stencil-h200.md).
pub const STREAMING_F32: StreamingShape = shape([128, 4], 4, 1, 0, 1, IN_WAVES);

/// The streaming kernel's default shape for `f64`: 16-byte rows of 2 points, two rows per thread
/// (92 registers), 64×4 threads (a tile of 128 × 8 points, two blocks per SM), launched
/// [`IN_WAVES`]. Same tuner run (94 shapes per grid): 95.9 % of the copy at 512³ (the best,
/// 64×8, 96.5 %; the former default, 32×16 with one row and runs of 32 planes, 94.2 %), 89.8 % at
/// 256×512×1024 (the best 90.4 %), 102.4 % at 128³, the best there (128 points wide: wider tiles
/// leave threads idle on 128-point rows), 88.5 % at 256×512×2048.
pub const STREAMING_F64: StreamingShape = shape([64, 4], 2, 2, 0, 1, IN_WAVES);

/// The seven-point kernel's shape for `f32` on grids whose x–y plane is more tiles than the GPU
/// holds blocks of [`STREAMING_F32`] and whose x–z cross-section is not (a plane of 4 MiB or
/// more): [`StreamAxis::Y`], 256×2 threads of 2 rows of 4 points (a tile of 1024 × 4, one block
/// of 512 threads per SM), in one wave. Chosen by `tune_streaming` along y on an H200 (2026-12-01,
/// 80 shapes): 92.1 % of the copy at 256×512×2048, where the default along z runs at 88.3 %
/// (64×8 and 128×4 threads of the same kernel 92.0 %; docs/stencil-h200.md).
pub const STREAMING_ALONG_Y_F32: StreamingShape =
    StreamingShape { axis: StreamAxis::Y, ..shape([256, 2], 4, 2, 0, 1, IN_WAVES) };

/// As [`STREAMING_ALONG_Y_F32`], for `f64`: 128×4 threads of 2 rows of 2 points (a tile of 256 ×
/// 8). Same tuner run (130 shapes): 92.3 % of the copy at 256×512×1024, where the default along
/// z runs at 90.4 % (64×8 and 256×2 threads 92.1 %); 92.4 % at 128×1024×1024.
pub const STREAMING_ALONG_Y_F64: StreamingShape =
    StreamingShape { axis: StreamAxis::Y, ..shape([128, 4], 2, 2, 0, 1, IN_WAVES) };

/// Planes per block of the short runs that the streaming sweep tries and the seven-point
/// kernel's H100 shapes take.
pub const SHORT_RUN_PLANES: u32 = 8;

/// [`STREAMING_F32`] on an H100 ([`TunedCard::H100`]): the same kernel and block in runs of
/// [`SHORT_RUN_PLANES`] planes, on every grid (its table has no walk along y). The
/// `stencil_streaming` sweep at 512³ on an H100 80GB HBM3 (criterion, back-to-back steps,
/// 2026-12-06): 366.3 µs a step, 97.6 % of the copy, against 441.0 (81.0 %) in one wave, 388.6 in
/// runs of 32 planes and 409.0 along y in one wave ([`STREAMING_ALONG_Y_F32`]).
pub const STREAMING_F32_H100: StreamingShape = StreamingShape { planes: SHORT_RUN_PLANES, ..STREAMING_F32 };

/// As [`STREAMING_F32_H100`], for `f64`: 713.3 µs, 99.3 % of the copy, against 826.6 (85.7 %) in
/// one wave, 729.3 in runs of 32 planes and 837.7 along y.
pub const STREAMING_F64_H100: StreamingShape = StreamingShape { planes: SHORT_RUN_PLANES, ..STREAMING_F64 };

/// The benchmarks' streaming sweep for `f32`: the default, then one change at a time (no
/// prefetch, prefetch 2, 8 or 2 points per thread, 2 rows per thread, one plane ahead in
/// registers, a 32×16 block, runs of 32 and of 8 planes per block instead of one wave), the
/// shape along y ([`STREAMING_ALONG_Y_F32`]; the library walks along y only where the x–y plane
/// does not fit in one wave, which the sweep's 512³ does), and the default in thread-block
/// clusters of each size of [`CLUSTER_SWEEP`].
pub const STREAMING_SWEEP_F32: [StreamingShape; SWEEP_LEN] =
    sweep_from(STREAMING_F32, 8, 2, STREAMING_ALONG_Y_F32);

/// The benchmarks' streaming sweep for `f64`: the same changes from its default (4 or 1 points
/// per thread; one row per thread instead of two).
pub const STREAMING_SWEEP_F64: [StreamingShape; SWEEP_LEN] =
    sweep_from(STREAMING_F64, 4, 1, STREAMING_ALONG_Y_F64);

/// Shapes in each streaming sweep: the default, its nine variants of one change each, the shape
/// along y, and the default in each cluster size of [`CLUSTER_SWEEP`].
const SWEEP_LEN: usize = 11 + CLUSTER_SWEEP.len();

/// `default`, then each of the sweep's changes to it alone: `wider` and `narrower` points per
/// thread, and the other rows per thread (1 ↔ 2); then `along_y`; then the default in clusters.
const fn sweep_from(
    default: StreamingShape,
    wider: usize,
    narrower: usize,
    along_y: StreamingShape,
) -> [StreamingShape; SWEEP_LEN] {
    let [two, four, eight] = CLUSTER_SWEEP;
    let StreamingShape { kernel: StreamingKernel { vector, rows, .. }, block, planes, .. } = default;
    [
        default,
        shape(block, vector, rows, 0, 0, planes),
        shape(block, vector, rows, 0, 2, planes),
        shape(block, wider, rows, 0, 1, planes),
        shape(block, narrower, rows, 0, 1, planes),
        shape(block, vector, 3 - rows, 0, 1, planes),
        shape(block, vector, rows, 1, 1, planes),
        StreamingShape { block: [32, 16], ..default },
        StreamingShape { planes: RUN_PLANES, ..default },
        StreamingShape { planes: SHORT_RUN_PLANES, ..default },
        along_y,
        default.with_cluster(two),
        default.with_cluster(four),
        default.with_cluster(eight),
    ]
}

/// Planes beyond the z queue that the high-order stars' and the box's streaming kernels prefetch
/// into L2 (`star_streaming.rs`, `star_rows_streaming.rs`, `box_streaming.rs`): one, the plane
/// after the one each iteration loads. Built into every such kernel, so every card's launch
/// table names it (`p1`). Two planes ahead lost 15 % on the star25 `f32` in one wave (the H200's
/// launch) on an H100 and gained 1 % in its runs of 32 planes (the H100's), and lost 0.4 % on the
/// two-row `f64` kernel (docs/stencil-h200.md, 2026-12-06); `prefetch.global.L1` instead of L2
/// brought nothing into L1 there and changed no time.
pub const SHAPE_PREFETCH: usize = 1;

/// Launch shapes of the high-order stars' and the box's streaming kernels (`star_streaming.rs`,
/// `box_streaming.rs`), as [`StreamingShape`]s with one row per thread and the plane after the
/// queue prefetched into L2; `ahead` is 1 where a star loads its x–y halo (the patches beside
/// and the rows above and below) a plane ahead (the box has no such choice: 0). Chosen by the
/// `stencil_shapes_sweep` benchmark (every built vector and `ahead` × [`SHAPE_SWEEP_BLOCKS`]) at
/// 512³ on an H200 (2026-11-30, one run): the star13 in `f32` at 448 Gpoints/s, 85.5 % of the
/// same run's copy; launched in pairs along y ([`CLUSTER_PAIR`]) since 2026-12-05.
pub const STAR13_F32: StreamingShape = shape([32, 8], 4, 1, 1, SHAPE_PREFETCH, 32).with_cluster(CLUSTER_PAIR);
/// As [`STAR13_F32`], for `f64` (16-byte rows of 2 points): 222 Gpoints/s, 84.0 % of the copy.
pub const STAR13_F64: StreamingShape = shape([32, 8], 2, 1, 1, SHAPE_PREFETCH, 32).with_cluster(CLUSTER_PAIR);
/// The 25-point star's launch shape for `f32`: 32×16 threads of one row of 4 points, halo a plane
/// ahead, launched [`IN_WAVES`]: at 512³ its 128 tiles of 128 × 16 points are one wave of one block
/// per SM (128 registers, the cap `ptx_build::REGISTER_CAPS` writes into the PTX; its queue shifts
/// by three planes every three, `star_streaming.rs`), each block walking its column's 512 planes,
/// so no run re-reads the `2R` planes beyond its ends and no queue fills twice. Against two rows a
/// thread (`star_rows_streaming.rs`, 32×4, runs of 32 planes): `stencil_shapes_sweep` at 512³, one
/// step, µs, on an H200 (2026-12-06, two rounds of one call) 353.0 / 354.4 against 400.9 / 397.9
/// for two rows, 72.2–72.5 % of the same run's copy against 63.8–64.3 %. On an H100 80GB HBM3 two
/// rows ran 1.24× faster than this one wave (2026-12-05, three calls: 452.5–456.3 against
/// 562.9–565.4), and slower than the same kernel in runs of 32 planes, which that card takes
/// ([`STAR25_F32_H100`]; 432.0 µs in its sweep of 2026-12-06). The H200 is the card this library is
/// tuned for (docs/stencil-h200.md, "The star25's defaults on an H200"); there the same kernel in
/// runs of 32 planes was slower than its one wave (2026-12-01: the sweep's best in runs, 32×8,
/// 407.1 µs against 382.6).
pub const STAR25_F32: StreamingShape = shape([32, 16], 4, 1, 1, SHAPE_PREFETCH, IN_WAVES);
/// The 25-point star's launch shape for `f64`: its tiles brought by tensor copies
/// ([`HALO_BY_TENSOR_COPY`], `star_tensor_streaming.rs`), 32×4 threads of four rows of 2 points,
/// launched [`IN_WAVES`]: at 512³ its 256 tiles are one wave of two blocks an SM, each walking its
/// column's 512 planes. On an H200 (2026-12-07, one call of alternating rounds, median of 20):
/// one step at 512³ 0.6503 / 0.6510 ms, 78.0–78.5 % of the same run's copy, against 0.7821 /
/// 0.7826 ms (65.2–65.6 %) for the former default ([`STAR25_F64_TWO_ROWS`]), 16.8 % less time;
/// 200 steps 0.7135 ms a step against 0.8091 (71.1 % against 62.8 %). In runs of 32 / 64 / 128
/// planes one step took 0.7109–0.7123 / 0.6810 / 0.6641 ms (the call before). On 256×512×1024,
/// whose 512 tiles are more than a wave, the launch walks runs of [`TENSOR_RUN_PLANES`] (128):
/// 0.6776 ms against 0.7388 for runs of 32 and 0.8346 for the former default. Where the tensor
/// copies cannot run, one row with its halo a plane ahead in runs of [`RUN_PLANES`] runs instead
/// (`high_order::without_tensor_copies` in `host`).
pub const STAR25_F64: StreamingShape = shape([32, 4], 2, 4, HALO_BY_TENSOR_COPY, 0, IN_WAVES);

/// [`STAR25_F64`] before the tensor copies (2026-12-06 to 12-07): two rows of 2 points a thread
/// (`star_rows_streaming.rs`, 232 registers from ptxas 13.5 for sm_90), the y arm's rows loaded a
/// plane ahead, 32×4 threads, runs of 32 planes. The second row reads the y neighbours once for
/// both rows (0.69 L1 wavefronts a point against 0.94 for one row). Chosen for the long runs a
/// solver makes: on an H200 (2026-12-06 22:54, one call, alternating rounds at 512³) two rows took
/// 2.8–3.1 % less time than one row of 2 points (32×4, halo a plane ahead, runs of 32) over 200
/// steps (0.8008–0.8009 ms against 0.8243–0.8264), and `stencil_shapes_sweep`'s sustained steps
/// 836.6 µs against 885.0–887.7 (60.6 % of the copy against 57.1–57.3); one step alone favours
/// one row, 4.3–4.4 % less time (0.7532–0.7543 ms against 0.7880–0.7883). Two rows in 32×8
/// blocks gained nothing. docs/stencil-h200.md has the history, and the H100, where one row leads
/// in both (`ncu`: two rows wait on their loads at 8 warps an SM): [`STAR25_F64_H100`].
pub const STAR25_F64_TWO_ROWS: StreamingShape = shape([32, 4], 2, 2, 1, SHAPE_PREFETCH, 32);
/// The 27-point box's launch shape for `f32`: 32×16 threads of 4 points (64 registers from ptxas
/// for sm_90, so an SM holds two such blocks), launched [`IN_WAVES`]. Chosen on an H200
/// (2026-12-02) once the kernel kept three values a point (`box_streaming.rs`):
/// `stencil_shapes_sweep` 288.8 µs a step against 318.1 for the former default (32×4 threads, runs
/// of 32 planes); one step at 512³, alternating in one call, 0.2748–0.2752 ms against
/// 0.2947–0.2948 (93.8–94.0 % of the copy against 87.6–88.0).
pub const BOX27_F32: StreamingShape = shape([32, 16], 4, 1, 0, SHAPE_PREFETCH, IN_WAVES);
/// The 27-point box's launch shape for `f64`: 32×16 threads of 2 points in each of 2 rows (a thread
/// loads 4 rows a plane for 2 rows of output: by count 1.5 L1 sectors a point, against the 3.0
/// `ncu` counted for one row of 4 points; 128 registers, one block per SM), launched [`IN_WAVES`]:
/// at 512³ one wave of 128 blocks, each walking its whole column. `stencil_shapes_sweep` (H200,
/// 2026-12-02): 581.5 µs a step against 649.5 for the former default (one row of 4 points); one
/// step at 512³ 0.5698–0.5749 ms, 88.6–89.1 % of the copy (the former default, in an earlier call
/// of the same session: 0.5904–0.5910, 85.6–85.8 %); the same launch in runs of 32 planes took
/// 596.0 µs in that sweep. An H100 takes [`BOX27_F64_H100`].
pub const BOX27_F64: StreamingShape = shape([32, 16], 2, 2, 0, SHAPE_PREFETCH, IN_WAVES);

/// The GPUs whose measurements chose the streaming kernels' launches. Where the best launch on
/// an H100 differs from the H200's, the H100 has its own constant (`*_H100`); every other shape,
/// and every other GPU, takes the H200's, the card this library is tuned for. The two
/// cards share the chip (132 SMs, the same clocks) and differ in memory (the H200 has 1.4× the
/// DRAM bandwidth and 60 MiB of L2 against 50), and launches in one wave, one block an SM, fare
/// differently: on the H100 the blocks of one wave finish unevenly (`ncu`: the SMs active 76 %
/// of the star25 `f32`'s cycles, docs/stencil-h200.md, "`--launch` on a GPU"), and runs of
/// planes, which the GPU hands out as SMs free up, balance them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TunedCard {
    /// The NVIDIA H200, and every GPU without a table of its own.
    H200,
    /// The NVIDIA H100 (measured on the H100 80GB HBM3, SXM).
    H100,
}

impl TunedCard {
    /// Every card with a table, the H200's (the default) first. Which one a GPU takes is the
    /// host's to say, from the name the driver gives it (`GpuInfo::tuned_card` in `host`).
    pub const ALL: [TunedCard; 2] = [TunedCard::H200, TunedCard::H100];
}

/// [`STAR25_F32`] on an H100: the same kernel and blocks in runs of [`RUN_PLANES`] planes. One
/// step at 512³ (`stencil --launch`, H100 80GB HBM3, 2026-12-06, two rounds, median of 30):
/// 0.4232–0.4236 ms, 85.8–86.1 % of the same run's copy, against 0.5683–0.5704 (63.3–63.8 %) in
/// one wave; 200 steps 85.7–86.1 % against 65.4–65.5 %; runs of 64 planes 82.2 % (an earlier
/// call: runs of 32 85.0 %, of 64 81 %, of 128 and 256 75 %, one wave 63 %). The sweep
/// (`stencil_shapes_sweep`, sustained) has it within 0.6 % of its best, 32×8 threads in runs of 32.
pub const STAR25_F32_H100: StreamingShape = StreamingShape { planes: RUN_PLANES, ..STAR25_F32 };

/// [`STAR25_F64`] on an H100: the tiles brought by tensor copies ([`HALO_BY_TENSOR_COPY`],
/// `star_tensor_streaming.rs`) in blocks of 32×8 threads of four rows of 2 points (tiles of
/// 72×40 for 64×32 points: 1.41 reads a point against 1.69 in 32×4 blocks; one block an SM),
/// runs of 128 planes. One call on an H100 80GB HBM3 (2026-12-07 21:22–21:26, held warm,
/// `stencil --launch`, median of 20, alternating rounds): at 512³ one step 0.7773 / 0.7773 ms,
/// 91.5–92.2 % of the same run's copy, against 0.8252 / 0.8255 ms (86.2–86.6 %) for 32×4 blocks in
/// runs of 32 (the default before), 5.8 % less time; runs of 256 / 64 / 32 / one wave 0.7756 /
/// 0.7904 / 0.8161 / 0.8443–0.8555; 200 steps 0.7763 ms a step against 0.8207; 256×512×1024
/// 0.8153 ms (87.3 %) against 0.8710 for 32×4 blocks in runs of 128 and 0.8800 in runs of 32. The
/// 32×4 blocks had taken 7.9 % less time than the one-row kernel ([`STAR25_F64_H100_REGISTERS`],
/// 2026-12-07 17:04: 0.8261–0.8275 ms against 0.8972–0.8974). Where the tensor copies cannot run
/// (rows of a length no 16-byte row holds, grids past the copy engine's limits), one row with its
/// halo a plane ahead runs in the same blocks (`high_order::without_tensor_copies` in `host`),
/// the best block of that kernel in the H100's sweep.
pub const STAR25_F64_H100: StreamingShape = shape([32, 8], 2, 4, HALO_BY_TENSOR_COPY, 0, 128);

/// [`STAR25_F64_H100`] before the tensor copies (2026-12-06 to 12-07): one row of 2 points a
/// thread, halo a plane ahead, 32×4 threads, runs of [`RUN_PLANES`] planes (the H200's default
/// before 2026-12-06). One step at 512³, three calls each alternating three rounds: 4.9–5.2 % less
/// time than two rows (0.8977–0.8981 ms, 79.4–79.8 % of the copy, against 0.9438–0.9441 in the
/// last); 200 steps 3.2–3.8 % less; in the sweep (sustained) 939.2 µs against 965.1–970.2 for two
/// rows, within 0.4 % of its best (32×8).
pub const STAR25_F64_H100_REGISTERS: StreamingShape = shape([32, 4], 2, 1, 1, SHAPE_PREFETCH, RUN_PLANES);

/// [`BOX27_F64`] on an H100: the same kernel and blocks in runs of [`RUN_PLANES`] planes. One step
/// at 512³ (2026-12-06, two rounds): 95.1 / 95.4 % of the copy against 88.6 / 88.7 % in one wave,
/// 200 steps 95.6 / 95.9 % against 88.4 / 89.1 % (runs of 64: the same within 0.5 %).
pub const BOX27_F64_H100: StreamingShape = StreamingShape { planes: RUN_PLANES, ..BOX27_F64 };

/// Block shapes the `stencil_shapes` sweep crosses with every built high-order star and box
/// kernel (fewer threads per block let the register-hungry ones fit, and more blocks per SM).
pub const SHAPE_SWEEP_BLOCKS: [[u32; 2]; 3] = [[32, 4], [32, 8], [32, 16]];

/// Planes per block the `stencil_shapes` sweep also tries, with each shape's default kernel in
/// every block of [`SHAPE_SWEEP_BLOCKS`]: a run of `P` planes loads `2R` planes beyond it (the
/// neighbouring runs' edges, from L2 if they are still there), and fills its queue before it
/// stores anything, so longer runs waste less, and shorter ones leave fewer blocks idle at the end.
/// At 512³ on an H200 (one run) 32 planes were the fastest or within 2 % of it for every shape's
/// kernel, except the star13 in `f64`, 3 % faster with 64: one run, the default is not yet changed.
pub const SHAPE_SWEEP_PLANES: [u32; 3] = [16, 64, 128];

/// [`StreamingKernel::ahead`] of the high-order stars' kernels whose x–y halo comes from a ring
/// of shared-memory tiles ([`HaloRing`]), entry points `stencil_star<R>_shared_b<BX>x<BY>_v<V>_<t>`.
pub const HALO_IN_SHARED: usize = 2;

/// The shared-memory ring of the stars' shared-halo streaming kernel
/// (`star_shared_streaming.rs`): [`PLANES`](Self::PLANES) tiles of a plane, each the block's
/// `block[0] · vector` columns and `block[1]` rows with a halo of `order` rows above and below
/// and [`side`](Self::side) columns left and right (`order` rounded up to whole patches of
/// `vector`, so that every patch is one aligned vector). Shared by the kernel and the host.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HaloRing {
    /// The star's order `R`.
    pub order: usize,
    /// Points per thread (a patch), `V`.
    pub vector: usize,
    /// Threads per block along x and y.
    pub block: [usize; 2],
}

impl HaloRing {
    /// Tiles in the ring: the plane computed, the one being filled, and the one last read,
    /// which no thread may overwrite before the barrier after its readers (one barrier a plane).
    pub const PLANES: usize = 3;

    /// The planes the kernel walks are fewer bytes than this: it steps from plane to plane
    /// with one 32 × 32 → 64-bit multiply-add.
    pub const MAX_PLANE_BYTES: u64 = 1 << 32;

    /// Whether the ring's kernel fits `grid` of elements of `element_bytes`: whole rows of
    /// patches, and planes under [`MAX_PLANE_BYTES`](Self::MAX_PLANE_BYTES).
    pub const fn fits(self, grid: super::Grid3, element_bytes: usize) -> bool {
        let plane_bytes = grid.nx as u64 * grid.ny as u64 * element_bytes as u64;
        (grid.nx as usize).is_multiple_of(self.vector) && plane_bytes < Self::MAX_PLANE_BYTES
    }

    /// Halo columns on each side of a tile: `order` rounded up to whole patches.
    pub const fn side(self) -> usize {
        self.order.div_ceil(self.vector) * self.vector
    }

    /// Elements in one row of a tile.
    pub const fn row_len(self) -> usize {
        self.block[0] * self.vector + 2 * self.side()
    }

    /// Elements in one tile.
    pub const fn plane_len(self) -> usize {
        self.row_len() * (self.block[1] + 2 * self.order)
    }

    /// Bytes of shared memory of the ring for elements of `element_bytes`.
    pub const fn shared_bytes(self, element_bytes: usize) -> usize {
        Self::PLANES * self.plane_len() * element_bytes
    }

    /// The tile's halo in patches: `order` rows above and below the block's, and the side
    /// patches of each of its rows.
    pub const fn halo_patches(self) -> usize {
        2 * self.order * self.block[0] + 2 * (self.side() / self.vector) * self.block[1]
    }

    /// Halo patches each thread of a block moves per plane (the last ones fewer).
    pub const fn patches_per_thread(self) -> usize {
        self.halo_patches().div_ceil(self.block[0] * self.block[1])
    }

    /// Where halo patch `index` (of [`halo_patches`](Self::halo_patches)) lies in a tile, as
    /// (row, first column): the rows above, those below, then the left and right patches of
    /// each of the block's rows. `None` past the last.
    pub const fn halo_patch(self, index: usize) -> Option<(usize, usize)> {
        let [bx, by] = self.block;
        let (v, r) = (self.vector, self.order);
        let row_patches = 2 * r * bx;
        if index < row_patches {
            let (row, patch) = (index / bx, index % bx);
            let row = if row < r { row } else { by + row };
            return Some((row, self.side() + patch * v));
        }
        let sides = self.side() / v;
        let index = index - row_patches;
        if index >= 2 * sides * by {
            return None;
        }
        let (right, index) = (index >= sides * by, index % (sides * by));
        let (row, patch) = (r + index / sides, index % sides);
        let column = if right { self.side() + bx * v + patch * v } else { patch * v };
        Some((row, column))
    }
}

/// [`StreamingKernel::ahead`] of the high-order stars' kernels whose x–y tiles arrive by
/// Hopper's tensor copies ([`TensorRing`], `star_tensor_streaming.rs`), entry points
/// `stencil_star<R>_tensor_b<BX>x<BY>_v<V>_r<ROWS>_<t>`. They take no L2 prefetch (`p0`): the
/// ring's copies run [`TensorRing::TILES`] − `R` planes ahead of their use.
pub const HALO_BY_TENSOR_COPY: usize = 3;

/// The shared-memory ring of the stars' tensor-copy streaming kernel
/// (`star_tensor_streaming.rs`): [`TILES`](Self::TILES) tiles, each one plane of the block's
/// `block[0] · vector` columns and `block[1] · rows` rows with a halo of `order` rows above and
/// below and [`side`](Self::side) columns left and right, brought whole by one tensor copy (the
/// copy's box, [`box_dims`](Self::box_dims)); then one transaction barrier per tile. Shared by
/// the kernel and the host.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TensorRing {
    /// The star's order `R`.
    pub order: usize,
    /// Points per thread along x (a patch), `V`.
    pub vector: usize,
    /// Threads per block along x and y.
    pub block: [usize; 2],
    /// Consecutive rows per thread.
    pub rows: usize,
}

impl TensorRing {
    /// Tiles in the ring: the plane computed, the `R` planes after it that the z queue has
    /// taken, and the copies in flight. Seven for the star25: on an H100 at 512³ (`f64`, 32×4
    /// threads of 4 rows, the CUDA prototype, docs/stencil-h200.md) 0.8230–0.8245 ms a step,
    /// against 0.8402 for six and 0.8575 for eight (eight leave one block an SM).
    pub const TILES: usize = 7;

    /// A tile's start in shared memory is a multiple of this many bytes (a tensor copy's
    /// destination must be).
    pub const TILE_ALIGN: usize = 128;

    /// Halo columns on each side of a tile: `order` rounded up to whole patches.
    ///
    /// This and the sizes below saturate rather than overflow, so that the host may ask them of
    /// any launch before refusing one that is not built.
    pub const fn side(self) -> usize {
        if self.vector == 0 {
            self.order
        } else {
            self.order.div_ceil(self.vector).saturating_mul(self.vector)
        }
    }

    /// The box one tensor copy brings, in elements (x, y, z): one plane of a tile.
    pub const fn box_dims(self) -> [u32; 3] {
        let x = self.block[0].saturating_mul(self.vector).saturating_add(self.side().saturating_mul(2));
        let y = self.block[1].saturating_mul(self.rows).saturating_add(self.order.saturating_mul(2));
        let most = u32::MAX as usize;
        [if x < most { x as u32 } else { u32::MAX }, if y < most { y as u32 } else { u32::MAX }, 1]
    }

    /// Elements in one row of a tile.
    pub const fn row_len(self) -> usize {
        self.box_dims()[0] as usize
    }

    /// Bytes of one tile's box, the count its barrier expects.
    pub const fn box_bytes(self, element_bytes: usize) -> usize {
        let [x, y, _] = self.box_dims();
        (x as usize).saturating_mul(y as usize).saturating_mul(element_bytes)
    }

    /// Elements from one tile's start to the next's: the box rounded up to
    /// [`TILE_ALIGN`](Self::TILE_ALIGN) bytes.
    pub const fn tile_stride(self, element_bytes: usize) -> usize {
        let bytes = self.box_bytes(element_bytes).div_ceil(Self::TILE_ALIGN).saturating_mul(Self::TILE_ALIGN);
        bytes / element_bytes
    }

    /// Where the barriers start, in bytes from the ring's start: after the tiles.
    pub const fn barriers_offset(self, element_bytes: usize) -> usize {
        Self::TILES.saturating_mul(self.tile_stride(element_bytes)).saturating_mul(element_bytes)
    }

    /// Bytes of shared memory of the ring and its barriers (8 bytes each).
    pub const fn shared_bytes(self, element_bytes: usize) -> usize {
        self.barriers_offset(element_bytes).saturating_add(Self::TILES * 8)
    }
}

/// `StreamingShape` from block, vector, rows, ahead, prefetch and planes, in the order the
/// sweep's names (`32x16 v4 r1 a0 p1 z32`) write them.
const fn shape(
    block: [u32; 2],
    vector: usize,
    rows: usize,
    ahead: usize,
    prefetch: usize,
    planes: u32,
) -> StreamingShape {
    StreamingShape {
        kernel: StreamingKernel { vector, rows, ahead, prefetch },
        block,
        planes,
        axis: StreamAxis::Z,
        cluster: NO_CLUSTER,
    }
}

/// The const generics of one temporal kernel entry point (`temporal.rs`): see
/// [`TEMPORAL_KERNELS_F32`](super::TEMPORAL_KERNELS_F32) for the ones built.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TemporalKernel {
    /// Time steps fused into one pass (`K`).
    pub depth: usize,
    /// Consecutive y rows per thread.
    pub rows: usize,
}

/// A launch shape of the temporal kernel: the entry point, and the warps per block (stacked
/// along y; a block is 32 lanes wide).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TemporalShape {
    pub kernel: TemporalKernel,
    /// Warps per block along y.
    pub warps: u32,
}

impl TemporalShape {
    /// Rows of the tile along y.
    pub const fn tile_rows(self) -> u32 {
        self.warps * self.kernel.rows as u32
    }
}

/// The temporal kernel's default shape for `f32`: 4 steps per pass, 8 rows per thread, 8 warps
/// (a 32 × 64 tile writing its inner 24 × 56; 231 registers, one block per SM). Chosen by the
/// criterion sweep on an H200 (2026-11-30, 64 steps at 512³, `TEMPORAL_SWEEP_F32`): 719
/// Gpoints/s per step, 1.36× the copy; depth 4 with 4 rows 693, depth 3 665, 3 with 2 rows × 16
/// warps 630, depth 2 539, depth 6 462, depth 8 366. Deeper fusion loses to the redundant halo
/// work of overlapping tiles (docs/stencil-h200.md).
pub const TEMPORAL_F32: TemporalShape = temporal(4, 8, 8);

/// The temporal kernel's default shape for `f64`: 4 steps per pass, 4 rows per thread, 8 warps.
/// Same sweep: 360 Gpoints/s per step, 1.35× the copy; 3 steps with 2 rows × 16 warps 335, depth
/// 3 with 2 rows × 8 warps 311, depth 2 305, depth 6 110.
pub const TEMPORAL_F64: TemporalShape = temporal(4, 4, 8);

/// `TemporalShape` from depth, rows per thread and warps per block, the order the sweep's names
/// (`k3 r4 w8`) write them.
const fn temporal(depth: usize, rows: usize, warps: u32) -> TemporalShape {
    TemporalShape { kernel: TemporalKernel { depth, rows }, warps }
}

/// The benchmarks' temporal sweep for `f32`: the depths at 4 rows × 8 warps (a 32 × 32 tile),
/// the same tile as 2 rows × 16 warps (half the registers per thread, twice the threads), and
/// 16- and 64-row tiles at depth 4.
pub const TEMPORAL_SWEEP_F32: [TemporalShape; 10] = [
    temporal(2, 4, 8),
    temporal(3, 4, 8),
    temporal(4, 4, 8),
    temporal(6, 4, 8),
    temporal(8, 4, 8),
    temporal(2, 2, 16),
    temporal(3, 2, 16),
    temporal(4, 2, 16),
    temporal(4, 2, 8),
    temporal(4, 8, 8),
];

/// The benchmarks' temporal sweep for `f64`: the depths at 2 rows × 8 warps, the same tile as
/// 1 row × 16 warps, and 32-row tiles (4 rows × 8 warps, 2 × 16).
pub const TEMPORAL_SWEEP_F64: [TemporalShape; 10] = [
    temporal(2, 2, 8),
    temporal(3, 2, 8),
    temporal(4, 2, 8),
    temporal(6, 2, 8),
    temporal(2, 1, 16),
    temporal(3, 1, 16),
    temporal(2, 4, 8),
    temporal(4, 4, 8),
    temporal(2, 2, 16),
    temporal(3, 2, 16),
];

/// Input-tile edge `T` of the shared-memory tiled form of the order-`R` star (Fig. 8.8 with a
/// halo of `R`): the largest with `T³ ≤ 1024` threads, 8 for order 2 and 10 for order 4.
pub const fn star_tiled_in_tile_dim(order: usize) -> usize {
    if order <= 2 { 8 } else { 10 }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_halo_ring_covers_each_tile_element_a_star_reads_once() {
        for ring in [
            HaloRing { order: 4, vector: 4, block: [32, 16] },
            HaloRing { order: 4, vector: 2, block: [32, 8] },
            HaloRing { order: 2, vector: 4, block: [8, 3] },
            HaloRing { order: 4, vector: 1, block: [4, 2] },
        ] {
            let (w, h) = (ring.row_len(), ring.plane_len() / ring.row_len());
            let mut owner = vec![0u32; w * h];
            let side = ring.side();
            // The block's own patches.
            for y in 0..ring.block[1] {
                for x in 0..ring.block[0] * ring.vector {
                    owner[(ring.order + y) * w + side + x] += 1;
                }
            }
            for index in 0..ring.halo_patches() {
                let (row, column) = ring.halo_patch(index).unwrap();
                assert_eq!(column % ring.vector, 0, "{ring:?}");
                for e in 0..ring.vector {
                    owner[row * w + column + e] += 1;
                }
            }
            assert_eq!(ring.halo_patch(ring.halo_patches()), None);
            // Every element a star reads is written once; the corners, which it never reads, not at all.
            for row in 0..h {
                for column in 0..w {
                    let corner =
                        (row < ring.order || row >= h - ring.order) && (column < side || column >= w - side);
                    assert_eq!(owner[row * w + column], u32::from(!corner), "{ring:?} ({row}, {column})");
                }
            }
            assert!(ring.patches_per_thread() * ring.block[0] * ring.block[1] >= ring.halo_patches());
        }
        let f32_ring = HaloRing { order: 4, vector: 4, block: [32, 16] };
        assert_eq!((f32_ring.row_len(), f32_ring.plane_len()), (136, 136 * 24));
        assert_eq!(f32_ring.shared_bytes(4), 3 * 136 * 24 * 4);
        assert_eq!(f32_ring.patches_per_thread(), 1);
    }
}
