//! The conformance suite on this backend, found through the registry as any backend
//! is. While nothing is implemented, every case that reaches one of its operations is
//! reported as unsupported, none as passed or failed; the one case that passes needs
//! no operation of the backend (core's budget refuses a plan larger than itself). A
//! port watches cases move from unsupported to passed, and relaxes this test as they
//! do; once none is left, `CRUCIBLE_REQUIRE=<name>` makes any unsupported case fail.

use crucible_backend_template as _;
use crucible_conformance::{run, Config, Outcome};
use crucible_core::registry::{select, ProbeOptions};
use crucible_core::Bls12_381;

/// The cases that use no operation of the backend.
const NEEDS_NO_OPERATION: [&str; 1] = ["lease/plan-larger-than-budget-fails-at-once"];

/// How the suite reports an optional capability the backend does not claim (the
/// sparse product: without it the QAP is evaluated on the host).
const OPTIONAL_CAPABILITY: &str = "template has no sparse product";

#[test]
fn every_case_is_unsupported_and_none_passes_on_an_operation() {
    let selected =
        select::<Bls12_381>("template", &ProbeOptions::default()).expect("the backend registers");
    let config = Config::new(4);
    let mut cases = Vec::new();
    let summary = run(&*selected.backend, &config, &mut |case| {
        println!("{case}");
        cases.push(case.clone());
    });
    println!("{summary}");
    assert!(summary.unsupported > 20, "{summary}");
    assert_eq!(
        summary.failed,
        0,
        "failures:\n{}",
        summary.failures.join("\n")
    );
    for case in &cases {
        match &case.outcome {
            Outcome::Unsupported(why) if why.contains(OPTIONAL_CAPABILITY) => {}
            Outcome::Unsupported(why) => {
                assert!(why.contains("is not implemented"), "{}: {why}", case.name);
                assert!(
                    why.contains("backend-template/src/"),
                    "{}: {why}",
                    case.name
                );
            }
            Outcome::Passed => assert!(
                NEEDS_NO_OPERATION.contains(&case.name.as_str()),
                "{} passed on an operation the backend does not implement",
                case.name
            ),
            other => panic!("{}: {other:?}", case.name),
        }
    }
    assert_eq!(summary.passed, NEEDS_NO_OPERATION.len(), "{summary}");
}
