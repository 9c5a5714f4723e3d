//! `--stats` and `--repeat` of `ptc run` / `ptc eval`: the time of each
//! phase of a run (read data, parse, analyze, evaluate, print), the
//! evaluation's median and spread over repeated runs on the same loaded
//! data (and of each repetition's parse, analysis and evaluation
//! together, warm), the steps taken, the process's peak memory and the
//! memory the data took, printed on stderr as one line or one JSON object.

use std::time::Duration;

/// How `--stats` prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum StatsFormat {
    /// One line for people.
    Text,
    /// One JSON object.
    Json,
}

/// What a run measured.
#[derive(Debug, Default)]
pub struct RunStats {
    pub read_data: Duration,
    pub parse: Duration,
    pub analyze: Duration,
    /// One entry per evaluation (`--repeat N` gives N).
    pub evals: Vec<Duration>,
    /// One entry per repetition: its parse, analysis and evaluation.
    pub runs: Vec<Duration>,
    pub print: Duration,
    /// Steps of the last evaluation.
    pub steps: u64,
    /// The anonymous resident memory setting up the session added (see
    /// [`anon_rss_bytes`]): reading the data, and the tools and prelude
    /// if any. Where the system tells it.
    pub data_memory: Option<u64>,
}

use super::json_report::{ms, round_us};

/// (median, min, max) of the evaluations, in milliseconds.
fn spread(evals: &[Duration]) -> (f64, f64, f64) {
    let mut sorted: Vec<f64> = evals.iter().copied().map(ms).collect();
    sorted.sort_by(f64::total_cmp);
    if sorted.is_empty() {
        return (0.0, 0.0, 0.0);
    }
    let mid = sorted.len() / 2;
    let median = if sorted.len() % 2 == 1 {
        sorted[mid]
    } else {
        round_us((sorted[mid - 1] + sorted[mid]) / 2.0)
    };
    (median, sorted[0], sorted[sorted.len() - 1])
}

impl RunStats {
    /// The stats as `format` prints them (no trailing newline).
    pub fn render(&self, format: StatsFormat) -> String {
        let (median, min, max) = spread(&self.evals);
        let (run_median, run_min, run_max) = spread(&self.runs);
        let rss = peak_rss_bytes();
        match format {
            StatsFormat::Json => serde_json::json!({
                "phases_ms": {
                    "read_data": ms(self.read_data),
                    "parse": ms(self.parse),
                    "analyze": ms(self.analyze),
                    "eval": median,
                    "print": ms(self.print),
                },
                "eval_ms": {"median": median, "min": min, "max": max, "runs": self.evals.len()},
                "run_ms": {"median": run_median, "min": run_min, "max": run_max, "runs": self.runs.len()},
                "steps": self.steps,
                "peak_rss_bytes": rss,
                "data_memory_bytes": self.data_memory,
            })
            .to_string(),
            StatsFormat::Text => {
                let mut line = format!(
                    "stats: read data {:.2} ms, parse {:.2} ms, analyze {:.2} ms, eval {median:.2} ms",
                    ms(self.read_data),
                    ms(self.parse),
                    ms(self.analyze),
                );
                if self.evals.len() > 1 {
                    line.push_str(&format!(
                        " (median of {}, min {min:.2}, max {max:.2}); \
                         parse + analyze + eval {run_median:.2} ms (median)",
                        self.evals.len()
                    ));
                }
                line.push_str(&format!(
                    ", print {:.2} ms; {} steps",
                    ms(self.print),
                    self.steps
                ));
                if let Some(rss) = rss {
                    line.push_str(&format!("; peak memory {:.1} MB", rss as f64 / 1_000_000.0));
                }
                if let Some(data) = self.data_memory {
                    line.push_str(&format!(" (data {:.1} MB)", data as f64 / 1_000_000.0));
                }
                line
            }
        }
    }
}

/// The process's peak resident set (`VmHWM`), where the system tells it.
/// Most of it, for a small run, is the program's own code.
pub fn peak_rss_bytes() -> Option<u64> {
    status_bytes("VmHWM:")
}

/// The process's resident anonymous memory (`RssAnon`: its heap and
/// stacks, not the pages of its code or of files), where the system tells
/// it. Its growth over reading the data is the data's memory: the values
/// and the allocator's overhead. glibc keeps freed heap pages, so this
/// includes the reading's own temporaries.
pub fn anon_rss_bytes() -> Option<u64> {
    status_bytes("RssAnon:")
}

/// A size field of `/proc/self/status`, in bytes.
fn status_bytes(field: &str) -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with(field))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_and_spread_of_the_evaluations() {
        let d = Duration::from_millis;
        assert_eq!(spread(&[d(3), d(1), d(2)]), (2.0, 1.0, 3.0));
        assert_eq!(spread(&[d(4), d(1), d(2), d(3)]), (2.5, 1.0, 4.0));
        assert_eq!(spread(&[]), (0.0, 0.0, 0.0));
    }

    #[test]
    fn json_has_the_documented_shape() {
        let stats = RunStats {
            evals: vec![Duration::from_millis(2), Duration::from_millis(4)],
            runs: vec![Duration::from_millis(3), Duration::from_millis(5)],
            steps: 7,
            data_memory: Some(2_500_000),
            ..RunStats::default()
        };
        assert!(stats.render(StatsFormat::Text).ends_with(" (data 2.5 MB)"));
        let json: serde_json::Value =
            serde_json::from_str(&stats.render(StatsFormat::Json)).unwrap();
        for phase in ["read_data", "parse", "analyze", "eval", "print"] {
            assert!(json["phases_ms"][phase].is_f64(), "{phase}: {json}");
        }
        assert_eq!(json["eval_ms"]["runs"], 2);
        assert_eq!(json["eval_ms"]["median"], 3.0);
        assert_eq!(json["run_ms"]["median"], 4.0);
        assert_eq!(json["run_ms"]["runs"], 2);
        assert_eq!(json["steps"], 7);
        assert!(json.get("peak_rss_bytes").is_some());
        assert_eq!(json["data_memory_bytes"], 2_500_000);
    }
}
