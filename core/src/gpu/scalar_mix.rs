//! What a proof's MSM scalars look like: full width, or with a share of them 0 or 1.
//! Circuits built from bit decompositions (SHA-256, range checks) have mostly bits in
//! their witness, and an MSM adds such a term for a fraction of a full one's cost, so
//! the cost model prices a proof by its mix.

use std::fmt;
use std::str::FromStr;

use serde::Serialize;

/// Full width, or with a share of the scalars 0 or 1 (each equally likely), in
/// thousandths.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize)]
pub struct ScalarMix {
    /// Scalars in a thousand that are 0 or 1, at most 1000.
    per_mille: u16,
}

impl ScalarMix {
    /// Every scalar full width: what a witness is assumed to be when nothing is known
    /// of it (the slower case, so a budget chosen for it holds).
    pub const FULL: ScalarMix = ScalarMix { per_mille: 0 };

    /// The mix whose share of bits is `per_mille` thousandths (at most 1000).
    pub fn from_per_mille(per_mille: u16) -> ScalarMix {
        ScalarMix {
            per_mille: per_mille.min(1000),
        }
    }

    /// The share of bits in thousandths (as the bit-heavy circuit takes it).
    pub fn per_mille(&self) -> u16 {
        self.per_mille
    }

    /// The share of scalars that are 0 or 1, in [0, 1].
    pub fn bits(&self) -> f64 {
        f64::from(self.per_mille) / 1000.0
    }
}

/// `full` or `bits=<share>` (e.g. `bits=0.9`), the share rounded to thousandths.
impl FromStr for ScalarMix {
    type Err = String;

    fn from_str(s: &str) -> std::result::Result<ScalarMix, String> {
        let bad = || {
            format!("`{s}` is not a scalar mix (expected `full` or `bits=<share in 0..1>`, e.g. bits=0.9)")
        };
        if s == "full" {
            return Ok(ScalarMix::FULL);
        }
        let share: f64 = s
            .strip_prefix("bits=")
            .ok_or_else(bad)?
            .parse()
            .map_err(|_| bad())?;
        if !(0.0..=1.0).contains(&share) {
            return Err(bad());
        }
        Ok(ScalarMix::from_per_mille((share * 1000.0).round() as u16))
    }
}

impl fmt::Display for ScalarMix {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.per_mille == 0 {
            write!(f, "full")
        } else {
            write!(f, "bits={}", self.bits())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mixes_parse_print_and_refuse_what_is_not_a_share() {
        let mix: ScalarMix = "bits=0.9".parse().unwrap();
        assert_eq!(mix.per_mille(), 900);
        assert_eq!(ScalarMix::from_per_mille(900), mix);
        assert_eq!(mix.to_string().parse::<ScalarMix>().unwrap(), mix);
        for bad in ["bits=1.5", "bits=", "half", "bits=-0.1", "bits=NaN"] {
            assert!(bad.parse::<ScalarMix>().is_err(), "{bad}");
        }
        assert_eq!("full".parse::<ScalarMix>().unwrap(), ScalarMix::FULL);
        assert_eq!(ScalarMix::FULL.to_string(), "full");
    }
}
