//! Preflight: the bytes a request needs on the GPU and on the host, checked against what is
//! free **before** anything is allocated. Linux overcommits memory, so a large allocation
//! "succeeds" and the process is killed later, when the pages are written; only a check up
//! front turns "does not fit" into an error. The counts are `u128`, so no element count times
//! element size can overflow, and every refusal says what was asked, what is free, and the
//! largest size that fits.

use gpu_kernels::stencil::Grid3;

use crate::merge::HostKey;
use crate::{Element, Error, Gpu, Precision, Result};

/// Host memory the operating system can give without swapping: `MemAvailable` of
/// `/proc/meminfo`, in bytes; `None` where that is unknown (not Linux), and then host needs
/// are not checked.
pub fn host_available() -> Option<u64> {
    let meminfo = std::fs::read_to_string("/proc/meminfo").ok()?;
    parse_mem_available(&meminfo)
}

/// `MemAvailable: <n> kB` of a `/proc/meminfo` text, in bytes.
fn parse_mem_available(meminfo: &str) -> Option<u64> {
    let line = meminfo.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    kib.checked_mul(1024)
}

/// Bytes in SI units with two decimals (`768.00 GB`), for any `u128`.
pub fn human(bytes: u128) -> String {
    const UNITS: [(&str, f64); 5] = [("PB", 1e15), ("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("kB", 1e3)];
    let b = bytes as f64;
    UNITS
        .iter()
        .find(|(_, scale)| b >= *scale)
        .map_or_else(|| format!("{bytes} B"), |(unit, scale)| format!("{:.2} {unit}", b / scale))
}

/// Memory held back when naming the largest size that fits: the allocator rounds every buffer
/// up (to 2 MiB on the GPU) and the driver and runtime take some for themselves, so a size
/// that fills the free bytes exactly would still fail.
pub const RESERVE: u128 = 512 << 20;

/// The largest `n` with `n³ · bytes_per_point <= budget` (0 if not even 1³ fits).
pub fn largest_cube(budget: u128, bytes_per_point: u128) -> u64 {
    let points = budget / bytes_per_point.max(1);
    // Binary search on n: n³ <= points, n < 2^43 since points < 2^128.
    let (mut low, mut high) = (0u64, 1u64 << 43);
    while low < high {
        let mid = low + (high - low).div_ceil(2);
        if u128::from(mid).checked_pow(3).is_some_and(|cube| cube <= points) {
            low = mid
        } else {
            high = mid - 1
        }
    }
    low
}

/// What a stencil of one grid and element type needs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StencilNeed {
    /// `(nz, ny, nx)`.
    pub shape: (u64, u64, u64),
    /// The element type (its size: bytes per point).
    pub precision: Precision,
}

impl StencilNeed {
    /// The need of a grid of `T`.
    pub fn of<T: Element>(grid: Grid3) -> Self {
        Self::new(grid, T::PRECISION)
    }

    /// The need of a grid of elements of type `precision`.
    pub fn new(grid: Grid3, precision: Precision) -> Self {
        let Grid3 { nx, ny, nz } = grid;
        Self { shape: (nz.into(), ny.into(), nx.into()), precision }
    }

    /// Grids on the GPU: the input and two buffers that ping-pong over the time steps.
    pub const DEVICE_GRIDS: u128 = 3;
    /// Grids on the host for a checked run: the input, the downloaded result, and the CPU
    /// reference's two (its input copy and each step's output).
    pub const HOST_GRIDS_VERIFIED: u128 = 4;
    /// Grids on the host without the reference (`--no-verify`): the input and the result.
    pub const HOST_GRIDS_UNVERIFIED: u128 = 2;

    /// Bytes per point.
    fn element_bytes(&self) -> u128 {
        self.precision.bytes() as u128
    }

    fn points(&self) -> u128 {
        let (nz, ny, nx) = self.shape;
        u128::from(nz).saturating_mul(u128::from(ny)).saturating_mul(u128::from(nx))
    }

    /// Bytes of `grids` copies of the grid (saturating: past `u128` nothing fits anyway).
    pub fn bytes(&self, grids: u128) -> u128 {
        self.points().saturating_mul(self.element_bytes()).saturating_mul(grids)
    }

    fn describe(&self) -> String {
        let (nz, ny, nx) = self.shape;
        format!("a {nz}×{ny}×{nx} {} grid", self.precision)
    }

    fn largest(&self, budget: u128, grids: u128) -> u64 {
        largest_cube(budget.saturating_sub(RESERVE), grids * self.element_bytes())
    }

    /// Refuses, with [`Error::OutOfMemory`], a grid whose [`DEVICE_GRIDS`](Self::DEVICE_GRIDS)
    /// do not fit in `free` bytes of device memory.
    pub fn check_device(&self, free: u64) -> Result<()> {
        let need = self.bytes(Self::DEVICE_GRIDS);
        if need <= u128::from(free) {
            return Ok(());
        }
        Err(Error::OutOfMemory(format!(
            "{} needs {} on the GPU ({} grids: the input and two for the time steps); {} are free; the largest cube that fits is {}³",
            self.describe(),
            human(need),
            Self::DEVICE_GRIDS,
            human(u128::from(free)),
            self.largest(u128::from(free), Self::DEVICE_GRIDS),
        )))
    }

    /// Refuses a run whose host grids (the CLI's input, result and, if `verify`, the CPU
    /// reference's two) do not fit in `available` bytes; `None` skips the check.
    pub fn check_host(&self, verify: bool, available: Option<u64>) -> Result<()> {
        let Some(available) = available.map(u128::from) else { return Ok(()) };
        let grids = if verify { Self::HOST_GRIDS_VERIFIED } else { Self::HOST_GRIDS_UNVERIFIED };
        let need = self.bytes(grids);
        if need <= available {
            return Ok(());
        }
        let (what, hint) = if verify {
            let unverified = self.largest(available, Self::HOST_GRIDS_UNVERIFIED);
            (
                "the input, the result and the CPU reference's two grids",
                format!("; --no-verify drops the reference (the largest cube then is {unverified}³)"),
            )
        } else {
            ("the input and the result", String::new())
        };
        Err(Error::OutOfMemory(format!(
            "{} needs {} of host memory ({what}); {} are available; the largest cube that fits is {}³{hint}",
            self.describe(),
            human(need),
            human(available),
            self.largest(available, grids),
        )))
    }
}

/// What a merge of `m + n` keys needs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MergeNeed {
    pub m: u64,
    pub n: u64,
    /// Bytes per key.
    pub key_bytes: u64,
    /// Bytes per value that travels with a key (merge by key), 0 for keys alone.
    pub value_bytes: u64,
    /// 8-byte words of the partition per tile of [`MIN_TILE`](Self::MIN_TILE) keys: one for a
    /// merge (its co-rank), two for a set operation (its balanced split and status word, three
    /// words per tile of at least twice that size).
    pub partition_words: u64,
    /// `"i32"`, `"u32"`, `"i64"`, `"f32"` or `"f64"`.
    pub dtype: &'static str,
}

impl MergeNeed {
    /// The need of a merge of `m + n` keys of `K`.
    pub fn of<K: HostKey>(m: usize, n: usize) -> Self {
        Self {
            m: m as u64,
            n: n as u64,
            key_bytes: size_of::<K>() as u64,
            value_bytes: 0,
            partition_words: 1,
            dtype: K::NAME,
        }
    }

    /// The need of a set operation on `m + n` keys of `K` (its output buffer holds `m + n`).
    pub fn set_operation<K: HostKey>(m: usize, n: usize) -> Self {
        Self { partition_words: 2, ..Self::of::<K>(m, n) }
    }

    /// The need of a merge by key of `m + n` keys of `K`, each with a value of `value_bytes`.
    pub fn by_key<K: HostKey>(m: usize, n: usize, value_bytes: usize) -> Self {
        Self { value_bytes: value_bytes as u64, ..Self::of::<K>(m, n) }
    }

    /// Bytes per output: its key and its value.
    fn element_bytes(&self) -> u128 {
        u128::from(self.key_bytes + self.value_bytes)
    }

    /// Keys on the GPU per output key: A and B (one each, `m + n` in all) and the result.
    pub const DEVICE_COPIES: u128 = 2;
    /// Merge path's co-ranks: one 8-byte split per tile of at least this many keys (the
    /// smallest tile of its sweep), a bound on its partition array.
    pub const MIN_TILE: u128 = 896;
    /// Keys on the host per output key for a checked run: A and B, the result and the CPU
    /// reference.
    pub const HOST_COPIES_VERIFIED: u128 = 3;
    /// Without the reference (`--no-verify`).
    pub const HOST_COPIES_UNVERIFIED: u128 = 2;

    fn total(&self) -> u128 {
        u128::from(self.m) + u128::from(self.n)
    }

    /// Bytes on the GPU: A, B, the result and merge path's partition array.
    pub fn device_bytes(&self) -> u128 {
        let total = self.total();
        total * self.element_bytes() * Self::DEVICE_COPIES + (total / Self::MIN_TILE + 2) * 8 * self.words()
    }

    /// [`partition_words`](Self::partition_words), at least one.
    fn words(&self) -> u128 {
        u128::from(self.partition_words.max(1))
    }

    /// Bytes on the host: `copies` keys per output key.
    pub fn host_bytes(&self, copies: u128) -> u128 {
        self.total() * self.element_bytes() * copies
    }

    fn describe(&self) -> String {
        let values = match self.value_bytes {
            0 => String::new(),
            bytes => format!(" with {bytes}-byte values"),
        };
        format!("a merge of {} + {} {} keys{values}", self.m, self.n, self.dtype)
    }

    /// The largest `m + n` whose bytes at `per_key` bytes per output key fit in `budget`.
    fn largest(budget: u128, per_key: u128) -> u128 {
        budget.saturating_sub(RESERVE) / per_key.max(1)
    }

    /// Refuses a merge whose device buffers do not fit in `free` bytes.
    pub fn check_device(&self, free: u64) -> Result<()> {
        let need = self.device_bytes();
        if need <= u128::from(free) {
            return Ok(());
        }
        // device_bytes(t) <= t · (2K + 8w / MIN_TILE) + 16w, solved for t.
        let per_tile = self.element_bytes() * Self::DEVICE_COPIES * Self::MIN_TILE + 8 * self.words();
        let largest =
            u128::from(free).saturating_sub(RESERVE + 16 * self.words()) * Self::MIN_TILE / per_tile;
        Err(Error::OutOfMemory(format!(
            "{} needs {} on the GPU (A, B and the result); {} are free; the largest m + n that fits is {largest}",
            self.describe(),
            human(need),
            human(u128::from(free)),
        )))
    }

    /// Refuses a run whose host copies (the CLI's A, B, result and, if `verify`, the CPU
    /// reference) do not fit in `available` bytes; `None` skips the check.
    pub fn check_host(&self, verify: bool, available: Option<u64>) -> Result<()> {
        let Some(available) = available.map(u128::from) else { return Ok(()) };
        let copies = if verify { Self::HOST_COPIES_VERIFIED } else { Self::HOST_COPIES_UNVERIFIED };
        let need = self.host_bytes(copies);
        if need <= available {
            return Ok(());
        }
        let element_bytes = self.element_bytes();
        let (what, hint) = if verify {
            let unverified = Self::largest(available, element_bytes * Self::HOST_COPIES_UNVERIFIED);
            (
                "A, B, the result and the CPU reference",
                format!("; --no-verify drops the reference (the largest m + n then is {unverified})"),
            )
        } else {
            ("A, B and the result", String::new())
        };
        Err(Error::OutOfMemory(format!(
            "{} needs {} of host memory ({what}); {} are available; the largest m + n that fits is {}{hint}",
            self.describe(),
            human(need),
            human(available),
            Self::largest(available, element_bytes * copies),
        )))
    }
}

/// The free memory of `gpu`, for [`StencilNeed::check_device`] and [`MergeNeed::check_device`].
pub fn device_free(gpu: &Gpu) -> Result<u64> {
    Ok(gpu.memory()?.0 as u64)
}

/// Refuses to download `bytes` of `what` when the host has less memory available.
pub fn check_download(bytes: u128, what: &str) -> Result<()> {
    match host_available() {
        Some(available) if bytes > u128::from(available) => Err(Error::OutOfMemory(format!(
            "downloading {what} needs {} of host memory; {} are available",
            human(bytes),
            human(u128::from(available))
        ))),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GB: u64 = 1_000_000_000;

    fn f32_cube(n: u64) -> StencilNeed {
        StencilNeed { shape: (n, n, n), precision: Precision::F32 }
    }

    #[test]
    fn the_issue_example_4000_cubed_f32_on_139_gb() {
        let need = f32_cube(4000);
        assert_eq!(need.bytes(StencilNeed::DEVICE_GRIDS), 768 * u128::from(GB));
        let err = need.check_device(139 * GB).unwrap_err().to_string();
        assert!(
            err.starts_with("out of memory: a 4000×4000×4000 f32 grid needs 768.00 GB on the GPU (3 grids"),
            "{err}"
        );
        assert!(err.contains("139.00 GB are free"), "{err}");
        // 3 · 4 · n³ <= 139e9 less the reserve.
        let budget = 139 * u128::from(GB) - RESERVE;
        let n = largest_cube(budget, 12);
        assert!(u128::from(n).pow(3) * 12 <= budget);
        assert!(u128::from(n + 1).pow(3) * 12 > budget);
        assert!(err.ends_with(&format!("the largest cube that fits is {n}³")), "{err}");
        // And the cube named fits.
        f32_cube(n).check_device(139 * GB).unwrap();
    }

    #[test]
    fn largest_cube_is_exact_at_the_edges() {
        assert_eq!(largest_cube(0, 12), 0);
        assert_eq!(largest_cube(11, 12), 0);
        assert_eq!(largest_cube(12, 12), 1);
        assert_eq!(largest_cube(8 * 12 - 1, 12), 1);
        assert_eq!(largest_cube(8 * 12, 12), 2);
        assert_eq!(largest_cube(1000, 0), 10);
        // No overflow at the top of the range.
        let top = u128::from(largest_cube(u128::MAX, 1));
        assert!(top.checked_pow(3).is_some() && (top + 1).checked_pow(3).is_none());
    }

    #[test]
    fn byte_counts_past_u64_do_not_overflow() {
        let huge = StencilNeed { shape: (u64::MAX, u64::MAX, 2), precision: Precision::F64 };
        assert!(huge.bytes(StencilNeed::DEVICE_GRIDS) > u128::from(u64::MAX));
        let err = huge.check_device(u64::MAX).unwrap_err();
        assert!(matches!(err, Error::OutOfMemory(_)), "{err}");
        let merge = MergeNeed {
            m: u64::MAX,
            n: u64::MAX,
            key_bytes: 8,
            value_bytes: 0,
            partition_words: 1,
            dtype: "i64",
        };
        assert!(merge.device_bytes() > u128::from(u64::MAX));
        assert!(merge.check_device(u64::MAX).is_err());
        assert!(merge.check_host(false, Some(u64::MAX)).is_err());
    }

    #[test]
    fn host_checks_name_no_verify_and_skip_when_unknown() {
        let need = StencilNeed { shape: (3000, 3000, 3000), precision: Precision::F64 };
        let available = 120 * GB;
        let err = need.check_host(true, Some(available)).unwrap_err().to_string();
        assert!(err.contains("864.00 GB of host memory"), "{err}");
        assert!(err.contains("--no-verify drops the reference"), "{err}");
        let err = need.check_host(false, Some(available)).unwrap_err().to_string();
        assert!(err.contains("432.00 GB of host memory (the input and the result)"), "{err}");
        assert!(!err.contains("--no-verify"), "{err}");
        assert!(need.check_host(true, None).is_ok());
        f32_cube(100).check_host(true, Some(available)).unwrap();
    }

    #[test]
    fn a_merge_by_key_needs_its_values_too() {
        let keys = MergeNeed::of::<i32>(1 << 30, 1 << 30);
        let by_key = MergeNeed::by_key::<i32>(1 << 30, 1 << 30, 8);
        // A, B and C, keys (4 bytes) and values (8) each, and the same splits.
        assert_eq!(by_key.device_bytes() - keys.device_bytes(), 2 * (1 << 31) * 8);
        assert_eq!(by_key.host_bytes(3), 3 * (1 << 31) * 12);
        let err = by_key.check_device(30 * GB).unwrap_err().to_string();
        assert!(err.contains("i32 keys with 8-byte values needs 51.56 GB on the GPU"), "{err}");
        let largest: u128 = err.rsplit(' ').next().unwrap().parse().unwrap();
        assert!(largest < 30 * u128::from(GB) / 24 && largest > 29 * u128::from(GB) / 24, "{largest}");
    }

    #[test]
    fn merge_needs_name_the_largest_total_that_fits() {
        let need =
            MergeNeed { m: 1 << 40, n: 1, key_bytes: 4, value_bytes: 0, partition_words: 1, dtype: "i32" };
        let err = need.check_device(139 * GB).unwrap_err().to_string();
        assert!(
            err.starts_with("out of memory: a merge of 1099511627776 + 1 i32 keys needs 8.81 TB on the GPU"),
            "{err}"
        );
        let largest: u128 = err.rsplit(' ').next().unwrap().parse().unwrap();
        // Within a key's bytes of the budget: 139 GB over 8 bytes and a bit per key.
        assert!(largest > 139 * u128::from(GB) / 9 && largest < 139 * u128::from(GB) / 8, "{largest}");
        // The total named fits, split any way.
        let fits = MergeNeed { m: (largest / 2) as u64, n: (largest - largest / 2) as u64, ..need };
        fits.check_device(139 * GB).unwrap();
        let err = MergeNeed {
            m: 1 << 36,
            n: 1 << 36,
            key_bytes: 8,
            value_bytes: 0,
            partition_words: 1,
            dtype: "i64",
        }
        .check_host(true, Some(120 * GB))
        .unwrap_err()
        .to_string();
        assert!(err.contains("A, B, the result and the CPU reference"), "{err}");
        let unverified = (120 * u128::from(GB) - RESERVE) / 16;
        let hint = format!("--no-verify drops the reference (the largest m + n then is {unverified})");
        assert!(err.contains(&hint), "{err}");
    }

    #[test]
    fn mem_available_is_read_in_kib() {
        let text = "MemTotal:       131072000 kB\nMemFree:         1000 kB\nMemAvailable:   120000000 kB\n";
        assert_eq!(parse_mem_available(text), Some(120_000_000 * 1024));
        assert_eq!(parse_mem_available("MemTotal: 5 kB\n"), None);
        assert_eq!(human(768_000_000_000), "768.00 GB");
        assert_eq!(human(999), "999 B");
    }
}
