//! Canonical JSON and the argument hash a decision binds to.

use serde_json::Value;
use sha2::{Digest, Sha256};

/// Serialises with object keys sorted (serde_json's default map is ordered), no whitespace.
pub fn canonical_json(value: &Value) -> String {
    // serde_json's Map is a BTreeMap unless `preserve_order` is enabled, which this workspace never
    // enables: the keys come out sorted at every depth.
    value.to_string()
}

/// SHA-256 of the canonical JSON, lowercase hex: the `args_hash` a decision is bound to.
pub fn args_hash(value: &Value) -> String {
    hex::encode(Sha256::digest(canonical_json(value).as_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn key_order_does_not_change_the_hash() {
        let a: Value = serde_json::from_str(r#"{"b":1,"a":{"y":2,"x":[1,2]}}"#).unwrap_or_default();
        let b: Value = serde_json::from_str(r#"{"a":{"x":[1,2],"y":2},"b":1}"#).unwrap_or_default();
        assert_eq!(args_hash(&a), args_hash(&b));
        assert_ne!(args_hash(&a), args_hash(&json!({"a": 1})));
        assert_eq!(args_hash(&a).len(), 64);
    }
}
