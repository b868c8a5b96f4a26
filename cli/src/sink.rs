//! Where a command's progress lines go: to stdout for a person reading, nowhere when
//! stdout carries one JSON document (`--json`) that a program parses whole.

/// The progress lines of one run, handed down to every step that has something to say.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sink {
    /// Each line to stdout as it happens.
    Lines,
    /// Nothing: stdout is kept for the JSON document printed at the end.
    Json,
}

impl Sink {
    /// [`Sink::Json`] where `--json` was given, else [`Sink::Lines`].
    pub fn new(json: bool) -> Self {
        if json {
            Sink::Json
        } else {
            Sink::Lines
        }
    }

    /// Prints `line` to stdout, unless stdout is for the JSON document.
    pub fn say(&self, line: impl std::fmt::Display) {
        if *self == Sink::Lines {
            println!("{line}");
        }
    }

    /// Whether the run ends with one JSON document instead of lines.
    pub fn json(&self) -> bool {
        *self == Sink::Json
    }

    /// Prints the run's JSON document (pretty, one object).
    pub fn document(&self, value: &serde_json::Value) -> Result<(), crate::CliError> {
        let text = serde_json::to_string_pretty(value)
            .map_err(|e| crate::CliError::file(format!("cannot write JSON: {e}")))?;
        println!("{text}");
        Ok(())
    }
}
