//! Helpers shared by the fixture tests: reading the committed JSON and
//! comparing numbers at the crate's agreed tolerance.

#![allow(dead_code)]

use serde_json::Value;

/// Relative tolerance against scipy (and Go) reference values.
pub const REL_TOL: f64 = 1e-9;
/// Absolute tolerance for values that are (near) zero, e.g. tiny p-values
/// whose reference was itself computed by cancellation.
pub const ABS_TOL: f64 = 1e-12;

pub fn parse(text: &str) -> Value {
    serde_json::from_str(text).expect("fixture is valid JSON")
}

pub fn num(v: &Value) -> f64 {
    v.as_f64()
        .unwrap_or_else(|| panic!("expected a number, got {v}"))
}

pub fn opt_num(v: &Value) -> Option<f64> {
    if v.is_null() {
        None
    } else {
        Some(num(v))
    }
}

pub fn nums(v: &Value) -> Vec<f64> {
    v.as_array()
        .unwrap_or_else(|| panic!("expected an array, got {v}"))
        .iter()
        .map(num)
        .collect()
}

pub fn cases<'a>(root: &'a Value, key: &str) -> &'a [Value] {
    root[key]
        .as_array()
        .unwrap_or_else(|| panic!("fixture has no array {key:?}"))
}

pub fn close(actual: f64, expected: f64) -> bool {
    let diff = (actual - expected).abs();
    actual == expected || diff <= ABS_TOL || diff <= REL_TOL * actual.abs().max(expected.abs())
}

#[track_caller]
pub fn assert_close(actual: f64, expected: f64, context: &str) {
    assert!(
        close(actual, expected),
        "{context}: got {actual:e}, expected {expected:e} (diff {:e})",
        (actual - expected).abs()
    );
}

#[track_caller]
pub fn assert_close_opt(actual: Option<f64>, expected: Option<f64>, context: &str) {
    match (actual, expected) {
        (Some(a), Some(e)) => assert_close(a, e, context),
        (None, None) => {}
        _ => panic!("{context}: got {actual:?}, expected {expected:?}"),
    }
}
