//! With no backend crate linked (core's own tests link none), selecting one is an
//! error that says how to link one.

use crucible_core::registry::{registrations, select, ProbeOptions};

#[test]
fn no_linked_backend_says_how_to_link_one() {
    assert!(registrations().is_empty(), "core's tests link no backend");
    for spec in ["auto", "cpu"] {
        let e = select::<crucible_core::Bls12_381>(spec, &ProbeOptions::default())
            .err()
            .expect("no backend");
        let e = e.to_string();
        assert!(
            e.contains("no backend crate is linked into this binary"),
            "{spec}: {e}"
        );
        assert!(e.contains("use crucible_backends as _;"), "{spec}: {e}");
    }
}
