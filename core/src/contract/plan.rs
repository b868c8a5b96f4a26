//! Memory plans: every byte a proof will allocate, keyed and sized before anything is
//! allocated.

use std::fmt;

/// Names one item of a [`MemoryPlan`]. Keys are typed constants owned by whoever
/// allocates from them (`groth16::items::DOMAIN_A`, a backend's scratch keys), so a
/// misspelt key does not compile and two owners can never collide: the owner is
/// part of the key.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PlanKey {
    owner: &'static str,
    name: &'static str,
    index: u32,
}

impl PlanKey {
    /// The key `name` of `owner` (a crate or module: `groth16`, `cuda`, `cpu`).
    pub const fn new(owner: &'static str, name: &'static str) -> PlanKey {
        PlanKey {
            owner,
            name,
            index: 0,
        }
    }

    /// The `index`-th of several items in the same role (e.g. chunk buffer 0 and 1).
    pub const fn at(self, index: u32) -> PlanKey {
        PlanKey { index, ..self }
    }

    /// Who allocates from this key.
    pub fn owner(&self) -> &'static str {
        self.owner
    }

    /// The item's role within its owner.
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// Which of several items in the same role.
    pub fn index(&self) -> u32 {
        self.index
    }
}

impl fmt::Display for PlanKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.owner, self.name)?;
        if self.index != 0 {
            write!(f, "[{}]", self.index)?;
        }
        Ok(())
    }
}

impl serde::Serialize for PlanKey {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// One item of a plan, with its exact size in bytes.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct PlanItem {
    /// The item's key; allocations name the key they draw from.
    pub key: PlanKey,
    /// Exact bytes.
    pub bytes: u64,
}

/// A list of keyed items whose total is what a lease reserves from the budget.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct MemoryPlan {
    /// What the plan is for (shown when printed).
    pub label: String,
    items: Vec<PlanItem>,
    /// Lines that say how the plan's operations are split (a backend's chunking or
    /// batching): printed under the items, no bytes of their own.
    notes: Vec<String>,
}

impl MemoryPlan {
    /// An empty plan.
    pub fn new(label: impl Into<String>) -> Self {
        MemoryPlan {
            label: label.into(),
            items: Vec::new(),
            notes: Vec::new(),
        }
    }

    /// Adds a line saying how an operation of this plan is split (printed under the
    /// items); a line already here is not repeated.
    pub fn note(&mut self, line: impl Into<String>) -> &mut Self {
        let line = line.into();
        if !self.notes.contains(&line) {
            self.notes.push(line);
        }
        self
    }

    /// The notes in order.
    pub fn notes(&self) -> &[String] {
        &self.notes
    }

    /// Adds `bytes` under `key`. A key already in the plan grows by `bytes`: adding
    /// never shrinks a reservation (an owner that wants one buffer sized for the
    /// largest of several uses adds their maximum once).
    pub fn item(&mut self, key: PlanKey, bytes: u64) -> &mut Self {
        match self.items.iter_mut().find(|i| i.key == key) {
            Some(existing) => existing.bytes = existing.bytes.saturating_add(bytes),
            None => self.items.push(PlanItem { key, bytes }),
        }
        self
    }

    /// Makes the item `key` hold at least `bytes`: for one scratch buffer shared by
    /// several operations, sized for the largest.
    pub fn at_least(&mut self, key: PlanKey, bytes: u64) -> &mut Self {
        match self.items.iter_mut().find(|i| i.key == key) {
            Some(existing) => existing.bytes = existing.bytes.max(bytes),
            None => self.items.push(PlanItem { key, bytes }),
        }
        self
    }

    /// Adds every item of `other` (same rule for keys already here).
    pub fn merge(&mut self, other: &MemoryPlan) -> &mut Self {
        for i in &other.items {
            self.item(i.key, i.bytes);
        }
        for n in &other.notes {
            self.note(n.clone());
        }
        self
    }

    /// The items in order.
    pub fn items(&self) -> &[PlanItem] {
        &self.items
    }

    /// Index of the item with `key`.
    pub fn find(&self, key: PlanKey) -> Option<usize> {
        self.items.iter().position(|i| i.key == key)
    }

    /// Bytes of the item with `key` (0 when absent).
    pub fn bytes_of(&self, key: PlanKey) -> u64 {
        self.find(key).map_or(0, |i| self.items[i].bytes)
    }

    /// Sum of all items (saturating: a plan that large fails every budget check).
    pub fn total_bytes(&self) -> u64 {
        self.items
            .iter()
            .fold(0u64, |sum, i| sum.saturating_add(i.bytes))
    }
}

impl fmt::Display for MemoryPlan {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "{}:", self.label)?;
        let names: Vec<String> = self.items.iter().map(|i| i.key.to_string()).collect();
        let width = names.iter().map(String::len).max().unwrap_or(0).max(5);
        for (i, name) in self.items.iter().zip(&names) {
            writeln!(
                f,
                "  {:<width$}  {:>16} B  {:>12}",
                name,
                i.bytes,
                human_bytes(i.bytes)
            )?;
        }
        write!(
            f,
            "  {:<width$}  {:>16} B  {:>12}",
            "total",
            self.total_bytes(),
            human_bytes(self.total_bytes())
        )?;
        for n in &self.notes {
            write!(f, "\n  ({n})")?;
        }
        Ok(())
    }
}

/// Formats bytes with a binary unit (`1.50 GiB`).
pub fn human_bytes(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = bytes as f64;
    let mut u = 0;
    while v >= 1024.0 && u + 1 < UNITS.len() {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{bytes} B")
    } else {
        format!("{v:.2} {}", UNITS[u])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: PlanKey = PlanKey::new("test", "a");
    const B: PlanKey = PlanKey::new("other", "a");

    #[test]
    fn equal_names_of_different_owners_are_different_items() {
        let mut plan = MemoryPlan::new("p");
        plan.item(A, 10).item(B, 7);
        assert_eq!(plan.items().len(), 2);
        assert_eq!(plan.total_bytes(), 17);
    }

    #[test]
    fn adding_a_key_twice_never_shrinks_it() {
        let mut plan = MemoryPlan::new("p");
        plan.item(A, 10).item(A, 3);
        assert_eq!(plan.bytes_of(A), 13);
        let mut other = MemoryPlan::new("q");
        other.item(A, 1).item(A.at(1), 5);
        plan.merge(&other);
        assert_eq!(plan.bytes_of(A), 14);
        assert_eq!(plan.bytes_of(A.at(1)), 5);
        assert_eq!(A.at(1).to_string(), "test.a[1]");
    }
}
