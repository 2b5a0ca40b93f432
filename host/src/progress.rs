//! Progress on stderr for the command-line tools' slow steps (input generation, the CPU
//! reference, verification): a spinner with the step's name and elapsed time, shown only once a
//! step has taken [`DELAY`], only when stderr is a terminal, and never in `--json` mode.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// How long a step runs before its spinner appears.
pub const DELAY: Duration = Duration::from_secs(2);

/// How often the spinner is redrawn, and how often the watcher looks at the clock before that.
const TICK: Duration = Duration::from_millis(100);

/// Runs `work` and returns its result; if it takes longer than [`DELAY`], shows `label` with a
/// spinner on stderr until it ends (not when `quiet`).
pub fn step<R>(label: &str, quiet: bool, work: impl FnOnce() -> R) -> R {
    if quiet {
        return work();
    }
    let done = AtomicBool::new(false);
    std::thread::scope(|scope| {
        scope.spawn(|| {
            let start = Instant::now();
            while !done.load(Ordering::Acquire) {
                if start.elapsed() >= DELAY {
                    spin(label, &done, start);
                    return;
                }
                std::thread::sleep(TICK);
            }
        });
        let result = work();
        done.store(true, Ordering::Release);
        result
    })
}

/// The spinner, from the step's start until `done`.
fn spin(label: &str, done: &AtomicBool, start: Instant) {
    let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
    bar.set_style(ProgressStyle::with_template("{spinner} {msg} ({elapsed})").expect("a valid template"));
    bar.set_message(label.to_owned());
    bar.set_elapsed(start.elapsed());
    while !done.load(Ordering::Acquire) {
        bar.tick();
        std::thread::sleep(TICK);
    }
    bar.finish_and_clear();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_return_their_result_quiet_or_not() {
        assert_eq!(step("adding", true, || 2 + 2), 4);
        assert_eq!(step("adding", false, || 2 + 3), 5);
        // A step longer than the delay (the spinner draws nothing when stderr is not a terminal).
        let slow = step("waiting", false, || {
            std::thread::sleep(DELAY + TICK);
            "done"
        });
        assert_eq!(slow, "done");
    }
}
