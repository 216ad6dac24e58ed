//! One-paragraph summaries of the operator schemas, for editors' hovers.
//!
//! `generated/onnx_docs.json` is written by `scripts/gen_schemas.py` beside the schemas, from the
//! same pinned wheels: the first paragraph of each schema version's documentation. It is parsed
//! on first use only, so `check` and `build` never pay for it.

use serde::Deserialize;
use std::collections::HashMap;
use std::sync::OnceLock;

static DOCS_JSON: &str = include_str!("generated/onnx_docs.json");

#[derive(Deserialize)]
struct RawDocs {
    summaries: Vec<(String, String, i64, String)>,
}

type Summaries = HashMap<(String, String, i64), String>;

fn summaries() -> &'static Summaries {
    static SUMMARIES: OnceLock<Summaries> = OnceLock::new();
    SUMMARIES.get_or_init(|| match serde_json::from_str::<RawDocs>(DOCS_JSON) {
        Ok(raw) => raw.summaries.into_iter().map(|(d, n, v, text)| ((d, n, v), text)).collect(),
        Err(_) => HashMap::new(),
    })
}

/// The summary of the schema of `name` in `domain` (`""` for ai.onnx) that is in force from
/// `since_version`.
pub fn summary(domain: &str, name: &str, since_version: i64) -> Option<&'static str> {
    summaries().get(&(super::normalize_domain(domain).to_string(), name.to_string(), since_version)).map(String::as_str)
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_summary_parses_and_common_ops_have_one() {
        assert!(super::summaries().len() > 800);
        let softmax = super::summary("", "Softmax", 13).expect("Softmax 13 is documented");
        assert!(softmax.contains("normalized exponential"), "{softmax}");
        assert!(super::summary("com.microsoft", "Gelu", 1).is_some());
        assert!(super::summary("", "NoSuchOp", 1).is_none());
    }
}
