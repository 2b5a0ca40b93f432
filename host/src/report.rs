//! Plain-text tables and the shared behaviour of the command-line tools.

use std::fmt::Write as _;

use crate::{Error, GpuInfo};

/// A table printed with aligned columns: text left, numbers right.
pub struct Table {
    header: Vec<&'static str>,
    rows: Vec<Vec<String>>,
}

impl Table {
    pub fn new(header: Vec<&'static str>) -> Self {
        Self { header, rows: Vec::new() }
    }

    pub fn push(&mut self, row: Vec<String>) {
        self.rows.push(row);
    }

    /// The table as text, one line per row, columns separated by two spaces.
    pub fn render(&self) -> String {
        let widths: Vec<usize> = (0..self.header.len())
            .map(|c| {
                self.rows
                    .iter()
                    .map(|r| r[c].chars().count())
                    .chain([self.header[c].len()])
                    .max()
                    .unwrap_or(0)
            })
            .collect();
        let numeric = |c: usize| {
            self.rows.iter().all(|r| r[c].starts_with(|ch: char| ch.is_ascii_digit() || ch == '-'))
        };
        let mut out = String::new();
        let header: Vec<String> = self.header.iter().map(|h| h.to_string()).collect();
        for row in std::iter::once(&header).chain(&self.rows) {
            let cells: Vec<String> = row
                .iter()
                .enumerate()
                .map(|(c, cell)| {
                    if numeric(c) {
                        format!("{cell:>w$}", w = widths[c])
                    } else {
                        format!("{cell:<w$}", w = widths[c])
                    }
                })
                .collect();
            let _ = writeln!(out, "{}", cells.join("  ").trim_end());
        }
        out
    }
}

/// The line that names the GPU, its driver and the PTX target, above every report.
pub fn gpu_line(info: &GpuInfo) -> String {
    let (major, minor) = info.compute_capability;
    let (cuda_major, cuda_minor) = info.driver_cuda_version;
    format!(
        "GPU {}: {} (sm_{major}{minor}, {} SMs, {:.1} GiB, {} MiB L2), driver for CUDA {cuda_major}.{cuda_minor}, PTX built for {}",
        info.ordinal,
        info.name,
        info.multiprocessors,
        info.total_memory as f64 / (1u64 << 30) as f64,
        info.l2_bytes >> 20,
        info.ptx_arch,
    )
}

/// Prints `program: error: …` as one line and returns the exit code for errors (2).
pub fn report_error(program: &str, error: &Error) -> std::process::ExitCode {
    eprintln!("{program}: error: {error}");
    std::process::ExitCode::from(2)
}

/// The member of `all` named `text` (trimmed, any case, `_` read as `-`), or an error that
/// lists the names: "unknown {what} `{text}`: expected one of …". For `FromStr` of the
/// command-line enums (variants, distributions, shapes).
pub fn find_by_name<V: Copy>(
    text: &str,
    all: &[V],
    name: impl Fn(V) -> &'static str,
    what: &str,
) -> crate::Result<V> {
    let wanted = text.trim().to_ascii_lowercase().replace('_', "-");
    all.iter().copied().find(|&v| name(v) == wanted).ok_or_else(|| {
        let names: Vec<_> = all.iter().map(|&v| name(v)).collect();
        Error::BadArgument(format!("unknown {what} `{text}`: expected one of {}", names.join(", ")))
    })
}

/// Parses `all` (every one of `all`) or a comma-separated list of names, for `--variant`.
pub fn parse_list<V: Copy + std::str::FromStr<Err = Error>>(text: &str, all: &[V]) -> Result<Vec<V>, String> {
    if text == "all" {
        return Ok(all.to_vec());
    }
    text.split(',').map(|v| v.trim().parse().map_err(|e: Error| e.to_string())).collect()
}

/// Today's date (UTC) as `YYYY-MM-DD`, from the system clock, for report stamps.
pub fn today_utc() -> String {
    let secs = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs());
    civil_date((secs / 86_400) as i64)
}

/// The proleptic Gregorian date `days` after 1970-01-01 (H. Hinnant's `civil_from_days`).
pub fn civil_date(days: i64) -> String {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}")
}

/// `1,234,567`.
pub fn thousands(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, ch) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(ch);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_align_numbers_right_and_text_left() {
        let mut t = Table::new(vec!["variant", "ms"]);
        t.push(vec!["basic".into(), "1.5".into()]);
        t.push(vec!["register-tiled".into(), "10.25".into()]);
        assert_eq!(t.render(), "variant            ms\nbasic             1.5\nregister-tiled  10.25\n");
    }

    #[test]
    fn civil_dates() {
        assert_eq!(civil_date(0), "1970-01-01");
        assert_eq!(civil_date(11_016), "2000-02-29");
        assert_eq!(civil_date(19_723), "2024-01-01");
        assert_eq!(civil_date(-1), "1969-12-31");
        assert!(today_utc().starts_with("20"));
    }

    #[test]
    fn thousands_separators() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(134_217_728), "134,217,728");
    }
}
