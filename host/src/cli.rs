//! The options both command-line tools (`stencil`, `merge`) take the same way: how many timed
//! runs, whether to check, how to print, which GPU and which build of the kernels, which seed.
//! Each tool flattens [`RunOptions`] into its own arguments (`#[command(flatten)]`).

use crate::gpu::PtxChoice;

/// How a tool runs and reports its kernels.
#[derive(clap::Args, Debug, Clone, PartialEq, Eq)]
pub struct RunOptions {
    /// Timed runs per variant; the median is reported.
    #[arg(long, default_value_t = 20, value_parser = clap::value_parser!(u32).range(1..))]
    pub repeat: u32,
    /// Skip the check against the CPU reference.
    #[arg(long)]
    pub no_verify: bool,
    /// Print the results as JSON instead of a table.
    #[arg(long)]
    pub json: bool,
    /// GPU ordinal.
    #[arg(long, default_value_t = 0)]
    pub device: usize,
    /// Which build of the kernels to load: auto (the Hopper build, sm_90, on GPUs of compute
    /// capability 9.0 and up, else the portable one), portable (sm_70, on any GPU; to measure
    /// what the Hopper build gains) or hopper.
    #[arg(long, value_enum, default_value_t = PtxChoice::Auto)]
    pub ptx: PtxChoice,
    /// Seed of the random inputs (default: a fresh one, printed).
    #[arg(long)]
    pub seed: Option<u64>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Tool {
        #[command(flatten)]
        run: RunOptions,
    }

    fn parse(args: &[&str]) -> Result<RunOptions, clap::Error> {
        Tool::try_parse_from(std::iter::once("tool").chain(args.iter().copied())).map(|tool| tool.run)
    }

    #[test]
    fn defaults_and_every_option() {
        let defaults = RunOptions {
            repeat: 20,
            no_verify: false,
            json: false,
            device: 0,
            ptx: PtxChoice::Auto,
            seed: None,
        };
        assert_eq!(parse(&[]).unwrap(), defaults);
        let all =
            ["--repeat", "3", "--no-verify", "--json", "--device", "1", "--ptx", "portable", "--seed", "7"];
        let expected = RunOptions {
            repeat: 3,
            no_verify: true,
            json: true,
            device: 1,
            ptx: PtxChoice::Portable,
            seed: Some(7),
        };
        assert_eq!(parse(&all).unwrap(), expected);
    }

    #[test]
    fn bad_values_are_refused() {
        for bad in [&["--repeat", "0"][..], &["--device", "-1"], &["--ptx", "sm_80"], &["--seed", "x"]] {
            assert!(parse(bad).is_err(), "{bad:?}");
        }
    }
}
