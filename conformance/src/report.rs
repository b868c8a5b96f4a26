//! Machine-readable reports of a run for CI systems: JSON (every case and the
//! summary) and JUnit XML (one test suite per backend, one test case per case).

use std::collections::BTreeMap;

use serde_json::{json, Value};

use crate::{CaseResult, Outcome, Summary};

fn outcome_parts(outcome: &Outcome) -> (&'static str, Option<&str>) {
    match outcome {
        Outcome::Passed => ("passed", None),
        Outcome::Failed(why) => ("failed", Some(why)),
        Outcome::Unsupported(why) => ("unsupported", Some(why)),
        Outcome::Skipped(why) => ("skipped", Some(why)),
    }
}

/// `{ seed, passed, failed, unsupported, skipped, cases: [{ backend, name, outcome,
/// message, seconds }] }`; `outcome` is `passed`, `failed`, `unsupported` (the
/// backend answered `Unsupported`) or `skipped`.
pub fn json_report(cases: &[CaseResult], summary: &Summary) -> Value {
    let cases: Vec<Value> = cases
        .iter()
        .map(|c| {
            let (outcome, message) = outcome_parts(&c.outcome);
            json!({
                "backend": c.backend,
                "name": c.name,
                "outcome": outcome,
                "message": message,
                "seconds": c.duration.as_secs_f64(),
            })
        })
        .collect();
    json!({
        "seed": summary.seed,
        "passed": summary.passed,
        "failed": summary.failed,
        "unsupported": summary.unsupported,
        "skipped": summary.skipped,
        "cases": cases,
    })
}

fn xml_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for ch in s.chars() {
        match ch {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            // XML 1.0 cannot carry other control characters, even escaped.
            c if c.is_control() && !matches!(c, '\n' | '\t' | '\r') => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

/// JUnit XML: a `<testsuite>` per backend with a `<testcase>` per case, a
/// `<failure>` or `<skipped>` with its message (JUnit has no "unsupported": such a
/// case is skipped, its message saying so); the seed as a suite property.
pub fn junit_report(cases: &[CaseResult], summary: &Summary) -> String {
    let mut suites: BTreeMap<&str, Vec<&CaseResult>> = BTreeMap::new();
    for c in cases {
        suites.entry(c.backend.as_str()).or_default().push(c);
    }
    let mut xml = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    xml.push_str(&format!(
        "<testsuites name=\"crucible conformance\" tests=\"{}\" failures=\"{}\" skipped=\"{}\">\n",
        summary.passed + summary.failed + summary.unsupported + summary.skipped,
        summary.failed,
        summary.unsupported + summary.skipped
    ));
    for (backend, cases) in suites {
        let count = |kind: &str| {
            cases
                .iter()
                .filter(|c| outcome_parts(&c.outcome).0 == kind)
                .count()
        };
        let seconds: f64 = cases.iter().map(|c| c.duration.as_secs_f64()).sum();
        xml.push_str(&format!(
            "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" skipped=\"{}\" time=\"{seconds:.3}\">\n",
            xml_escape(backend),
            cases.len(),
            count("failed"),
            count("skipped") + count("unsupported")
        ));
        xml.push_str(&format!(
            "    <properties><property name=\"seed\" value=\"{}\"/></properties>\n",
            summary.seed
        ));
        for c in cases {
            let head = format!(
                "    <testcase classname=\"{}\" name=\"{}\" time=\"{:.3}\"",
                xml_escape(backend),
                xml_escape(&c.name),
                c.duration.as_secs_f64()
            );
            match &c.outcome {
                Outcome::Passed => xml.push_str(&format!("{head}/>\n")),
                Outcome::Failed(why) => xml.push_str(&format!(
                    "{head}>\n      <failure message=\"{}\"/>\n    </testcase>\n",
                    xml_escape(why)
                )),
                Outcome::Skipped(why) => xml.push_str(&format!(
                    "{head}>\n      <skipped message=\"{}\"/>\n    </testcase>\n",
                    xml_escape(why)
                )),
                Outcome::Unsupported(why) => xml.push_str(&format!(
                    "{head}>\n      <skipped message=\"unsupported: {}\"/>\n    </testcase>\n",
                    xml_escape(why)
                )),
            }
        }
        xml.push_str("  </testsuite>\n");
    }
    xml.push_str("</testsuites>\n");
    xml
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn case(backend: &str, name: &str, outcome: Outcome) -> CaseResult {
        CaseResult {
            backend: backend.into(),
            name: name.into(),
            outcome,
            duration: Duration::from_millis(5),
        }
    }

    #[test]
    fn reports_carry_every_case_and_escape_messages() {
        let cases = vec![
            case("cpu:0", "ntt/forward/2^3", Outcome::Passed),
            case(
                "cpu:0",
                "msm/g1/n=3",
                Outcome::Failed("got <a> & \"b\"".into()),
            ),
            case("cuda", "backend", Outcome::Skipped("no driver".into())),
        ];
        let mut summary = Summary {
            seed: 42,
            ..Summary::default()
        };
        cases.iter().for_each(|c| summary.record(c));
        let j = json_report(&cases, &summary);
        assert_eq!(j["failed"], 1);
        assert_eq!(j["cases"][1]["outcome"], "failed");
        assert_eq!(j["cases"][1]["message"], "got <a> & \"b\"");
        assert_eq!(j["cases"][2]["outcome"], "skipped");
        let x = junit_report(&cases, &summary);
        assert!(x.contains("<testsuites name=\"crucible conformance\" tests=\"3\" failures=\"1\" skipped=\"1\">"), "{x}");
        assert!(
            x.contains("<testsuite name=\"cpu:0\" tests=\"2\" failures=\"1\" skipped=\"0\""),
            "{x}"
        );
        assert!(
            x.contains("<failure message=\"got &lt;a&gt; &amp; &quot;b&quot;\"/>"),
            "{x}"
        );
        assert!(
            x.contains("<testsuite name=\"cuda\" tests=\"1\" failures=\"0\" skipped=\"1\""),
            "{x}"
        );
        assert!(x.contains("<property name=\"seed\" value=\"42\"/>"), "{x}");
    }
}
