//! The README's library quick start is `examples/prove_my_circuit.rs`, word for word,
//! so following the README builds and runs what CI builds and runs.

#[test]
fn readme_quick_start_is_the_example() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let example = std::fs::read_to_string(root.join("examples/prove_my_circuit.rs")).unwrap();
    let readme = std::fs::read_to_string(root.join("../README.md")).unwrap();
    let marker = "// crate-doc-end (the README shows the file from here)\n";
    let body = example
        .split_once(marker)
        .map(|(_, body)| body)
        .expect("the example has its README marker");
    let block = format!("```rust\n{body}```");
    assert!(
        readme.contains(&block),
        "README.md's library section must contain examples/prove_my_circuit.rs from its marker on:\n{block}"
    );
}
