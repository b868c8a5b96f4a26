//! Every `crucible` command in the README's and the guide's shell blocks is one this
//! binary accepts as written: each is parsed with the binary's own parser (and a
//! `prove` checked as `prove` checks its options before reading anything), so an
//! option renamed, removed or newly required fails the build on the page that still
//! shows the old form. CI then runs every one of them that this machine can run
//! (`scripts/doc_commands.py`); this check is all that the rest get.

use std::path::{Path, PathBuf};

use clap::Parser;

use crate::{Cli, Command};

/// The pages whose shell blocks are checked.
fn pages() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let guide = root.join("docs").join("src");
    let mut pages: Vec<PathBuf> = std::fs::read_dir(&guide)
        .expect("docs/src")
        .map(|e| e.expect("a page").path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    pages.sort();
    pages.insert(0, root.join("README.md"));
    pages.push(root.join("BENCHMARKS.md"));
    pages
}

/// The lines of the page's ```sh (or bash, console) blocks, continuations joined, each
/// with its line number.
fn shell_lines(text: &str) -> Vec<(usize, String)> {
    let mut lines = Vec::new();
    let mut in_shell = false;
    let mut pending: Option<(usize, String)> = None;
    for (i, line) in text.lines().enumerate() {
        let trimmed = line.trim();
        if let Some(info) = trimmed.strip_prefix("```") {
            in_shell = !in_shell && matches!(info.trim(), "sh" | "bash" | "console" | "shell");
            continue;
        }
        if !in_shell {
            continue;
        }
        let (start, mut joined) = pending.take().unwrap_or((i + 1, String::new()));
        joined.push_str(trimmed.strip_prefix("$ ").unwrap_or(trimmed));
        match joined.strip_suffix('\\') {
            Some(open) => pending = Some((start, format!("{} ", open.trim_end()))),
            None => lines.push((start, joined)),
        }
    }
    lines
}

/// Splits a shell line into words (single and double quotes, no expansion) and its
/// commands at `&&`, `||`, `;` and `|`; a `#` word starts a comment.
fn commands(line: &str) -> Vec<Vec<String>> {
    let mut commands = vec![Vec::new()];
    let mut word: Option<String> = None;
    let mut quote: Option<char> = None;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => word.get_or_insert_with(String::new).push(c),
            (None, '\'' | '"') => {
                quote = Some(c);
                word.get_or_insert_with(String::new);
            }
            (None, '#') if word.is_none() => break,
            (None, ' ' | '\t') => commands.last_mut().unwrap().extend(word.take()),
            (None, ';' | '&' | '|') => {
                commands.last_mut().unwrap().extend(word.take());
                if chars.peek() == Some(&c) {
                    chars.next();
                }
                commands.push(Vec::new());
            }
            (None, '(' | ')') => commands.last_mut().unwrap().extend(word.take()),
            (None, c) => word.get_or_insert_with(String::new).push(c),
        }
    }
    commands.last_mut().unwrap().extend(word);
    commands
}

/// `crucible`'s arguments, where `words` run it: `crucible ARGS`, `VAR=value crucible
/// ARGS`, `target/release/crucible ARGS` or `cargo run ... -p crucible-cli -- ARGS`.
fn crucible_args(words: &[String]) -> Option<Vec<String>> {
    // A redirection (`> out.json`) is the shell's, not an argument.
    let mut kept = Vec::new();
    let mut target = false;
    for word in words {
        if std::mem::take(&mut target) {
            continue;
        }
        match word.trim_start_matches(['1', '2']).strip_prefix(['>', '<']) {
            Some(rest) => target = rest.trim_start_matches('>').is_empty(),
            None => kept.push(word),
        }
    }
    let words: Vec<&String> = kept.into_iter().skip_while(|w| w.contains('=')).collect();
    let first = words.first()?;
    if first.as_str() == "crucible" || first.ends_with("/crucible") {
        return Some(words[1..].iter().map(|w| w.to_string()).collect());
    }
    let cargo_cli = first.as_str() == "cargo"
        && words.get(1).is_some_and(|w| w.as_str() == "run")
        && words.iter().any(|w| w.as_str() == "crucible-cli");
    let dashes = words.iter().position(|w| w.as_str() == "--")?;
    cargo_cli.then(|| words[dashes + 1..].iter().map(|w| w.to_string()).collect())
}

#[test]
fn every_command_on_the_pages_parses_as_written() {
    let mut checked = 0;
    let mut problems = Vec::new();
    for page in pages() {
        let text = std::fs::read_to_string(&page).expect("a page");
        let name = page.file_name().unwrap().to_string_lossy().into_owned();
        for (line, shell) in shell_lines(&text) {
            for words in commands(&shell) {
                let Some(args) = crucible_args(&words) else {
                    continue;
                };
                checked += 1;
                let argv = std::iter::once("crucible".to_string()).chain(args);
                let why = match Cli::try_parse_from(argv) {
                    Err(e) => e.to_string().lines().next().unwrap_or_default().to_string(),
                    // The checks `prove` makes of its options before reading anything.
                    Ok(Cli {
                        command: Command::Prove(args),
                    }) => match crate::prove::check_usage(&args) {
                        Err(e) => e.to_string(),
                        Ok(()) => continue,
                    },
                    Ok(_) => continue,
                };
                problems.push(format!("{name}:{line}: `{shell}`: {why}"));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    // The README's quick start, the guide's circom walk-through and BENCHMARKS'
    // reproducing commands: far more than a few.
    assert!(checked >= 40, "only {checked} commands found");
}

#[test]
fn shell_lines_are_split_into_commands_and_arguments() {
    let text = "```sh\n# a comment\ncrucible prove --zkey c.zkey \\\n  --wtns w.wtns  # note\n(cd x && npm ci) && cargo test\nCRUCIBLE_TUNING=t.toml cargo run --release -p crucible-cli -- plan --constraints 2^20\n```\n```rust\ncrucible not shell\n```\n";
    let lines = shell_lines(text);
    assert_eq!(lines.len(), 4, "{lines:?}");
    assert_eq!(
        lines[1],
        (
            3,
            "crucible prove --zkey c.zkey --wtns w.wtns  # note".into()
        )
    );
    let found: Vec<Vec<String>> = lines
        .iter()
        .flat_map(|(_, l)| commands(l))
        .filter_map(|w| crucible_args(&w))
        .collect();
    assert_eq!(
        found,
        vec![
            vec!["prove", "--zkey", "c.zkey", "--wtns", "w.wtns"],
            vec!["plan", "--constraints", "2^20"],
        ]
    );
    let redirected = commands("crucible prove --json > r.json 2>/dev/null");
    assert_eq!(
        crucible_args(&redirected[0]),
        Some(vec!["prove".to_string(), "--json".into()])
    );
    assert_eq!(
        commands("a 'b c' \"d\" | e"),
        vec![vec!["a", "b c", "d"], vec!["e"]]
    );
}
