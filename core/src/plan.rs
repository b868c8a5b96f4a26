//! Memory plans: every byte a proof will allocate, named, before anything is allocated.

use std::fmt;

/// One named buffer of a plan, with its exact size in bytes.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct PlanItem {
    /// The buffer's name; allocations name the item they draw from.
    pub name: String,
    /// Exact bytes.
    pub bytes: u64,
}

/// A list of named buffers whose total is what a lease reserves from the budget.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct MemoryPlan {
    /// What the plan is for (shown when printed).
    pub label: String,
    items: Vec<PlanItem>,
}

impl MemoryPlan {
    /// An empty plan.
    pub fn new(label: impl Into<String>) -> Self {
        MemoryPlan {
            label: label.into(),
            items: Vec::new(),
        }
    }

    /// Adds an item; an item with the same name grows to the larger of the two sizes
    /// (scratch shared by several operations is sized for the largest).
    pub fn item(&mut self, name: impl Into<String>, bytes: u64) -> &mut Self {
        let name = name.into();
        match self.items.iter_mut().find(|i| i.name == name) {
            Some(existing) => existing.bytes = existing.bytes.max(bytes),
            None => self.items.push(PlanItem { name, bytes }),
        }
        self
    }

    /// Adds every item of `other` (same rule for shared names).
    pub fn merge(&mut self, other: &MemoryPlan) -> &mut Self {
        for i in &other.items {
            self.item(i.name.clone(), i.bytes);
        }
        self
    }

    /// The items in order.
    pub fn items(&self) -> &[PlanItem] {
        &self.items
    }

    /// Index of the item named `name`.
    pub fn find(&self, name: &str) -> Option<usize> {
        self.items.iter().position(|i| i.name == name)
    }

    /// Sum of all items.
    pub fn total_bytes(&self) -> u64 {
        self.items.iter().map(|i| i.bytes).sum()
    }
}

impl fmt::Display for MemoryPlan {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "{}:", self.label)?;
        let width = self.items.iter().map(|i| i.name.len()).max().unwrap_or(0);
        for i in &self.items {
            writeln!(
                f,
                "  {:<width$}  {:>16} B  {:>12}",
                i.name,
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
        )
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
