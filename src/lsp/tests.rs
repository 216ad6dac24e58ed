//! Every request on every prefix of the examples, in process: no panic, whatever the text.

use super::documents::Checked;
use super::features;
use super::snapshot::Snapshot;
use crate::driver::{analyze, CompileOptions, Overlay, SourceInput};
use lsp_types::{Position, Range, Url};
use std::sync::Arc;

fn check(text: &str) -> Checked {
    let input = SourceInput { name: "example.onnxs".into(), bytes: text.as_bytes().to_vec() };
    let analysis = analyze(vec![input], &CompileOptions::default(), &Overlay::new()).expect("no schema files to read");
    Checked { version: 0, text: Arc::new(text.to_string()), analysis: Arc::new(analysis) }
}

#[test]
fn every_request_on_every_prefix_of_the_examples() {
    let uri = Url::parse("file:///example.onnxs").expect("a URI");
    for example in [include_str!("../../examples/tutorial.onnxs"), include_str!("../../examples/language_tour.onnxs")] {
        let mut last_parsed: Option<Checked> = None;
        for (n, _) in example.char_indices().chain([(example.len(), ' ')]) {
            let prefix = &example[..n];
            let current = check(prefix);
            if current.parsed() {
                last_parsed = Some(current.clone());
            }
            let known = Some(current.clone()).filter(Checked::parsed).or_else(|| last_parsed.clone());
            let s = Snapshot { uri: uri.clone(), text: current.text.clone(), current: Some(current), known };
            let lines = prefix.split('\n').count() as u32;
            let last = prefix.rsplit('\n').next().unwrap_or("").encode_utf16().count() as u32;
            for pos in [Position::new(lines - 1, last), Position::new(0, 0), Position::new(lines / 2, 4)] {
                features::hover(&s, pos);
                features::completion(&s, pos);
                features::signature_help(&s, pos);
                features::definition(&s, pos);
                features::code_actions(&s, Range::new(Position::new(0, 0), pos));
            }
            features::symbols(&s);
        }
    }
}
