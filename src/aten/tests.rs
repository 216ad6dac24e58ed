use std::path::PathBuf;
use std::time::Instant;

use super::*;

/// The shared copy of the torch 2.15 wheel's native_functions.yaml, if present.
fn shared_yaml() -> Option<String> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/pytorch/native_functions.yaml");
    match std::fs::read_to_string(&path) {
        Ok(text) => Some(text),
        Err(e) => {
            eprintln!("skipping: cannot read {}: {e}", path.display());
            None
        }
    }
}

/// The `- func:` values of native_functions.yaml (all are one-line plain scalars).
fn func_lines(yaml: &str) -> Vec<&str> {
    yaml.lines().filter_map(|l| l.strip_prefix("- func: ")).collect()
}

fn parse(text: &str) -> FunctionSchema {
    parse_schema(text).unwrap_or_else(|e| panic!("{text}: {} at {:?}", e.message, e.span))
}

fn tensor() -> Type {
    Type::Base(BaseType::Tensor)
}

#[test]
fn every_native_function_prints_back_to_its_text() {
    let Some(yaml) = shared_yaml() else { return };
    let funcs = func_lines(&yaml);
    assert_eq!(funcs.len(), 2590);
    let start = Instant::now();
    let mut failures = Vec::new();
    for func in &funcs {
        match parse_schema(func) {
            Ok(s) if s.to_string() == *func => {}
            Ok(s) => failures.push(format!("{func}\n  printed as {s}")),
            Err(e) => failures.push(format!("{func}\n  {} at {:?}", e.message, e.span)),
        }
    }
    eprintln!("parsed and printed {} schemas in {:?}", funcs.len(), start.elapsed());
    assert!(failures.is_empty(), "{} failures:\n{}", failures.len(), failures.join("\n"));
}

#[test]
fn embedded_data_is_the_shared_yaml_and_all_parses() {
    let registry = AtenRegistry::embedded();
    let start = Instant::now();
    let texts: Vec<String> = registry.schemas().map(ToString::to_string).collect();
    eprintln!("embedded registry: all {} parsed in {:?}", texts.len(), start.elapsed());
    assert_eq!(registry.len(), 2590);
    assert_eq!(texts.len(), 2590, "some embedded schema does not parse");
    let lines: Vec<&str> = registry::NATIVE_FUNCTIONS.lines().skip(1).collect();
    assert_eq!(texts, lines);
    assert!(AtenRegistry::embedded_source().contains("torch 2.15.0"), "{}", AtenRegistry::embedded_source());
    if let Some(yaml) = shared_yaml() {
        assert_eq!(lines, func_lines(&yaml));
    }
}

#[test]
fn embedded_lookups() {
    let r = AtenRegistry::embedded();
    let add = r.lookup("aten::add.Tensor").expect("aten::add.Tensor");
    assert_eq!(add.to_string(), "add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor");
    assert_eq!(add.qualified_name(), "aten::add.Tensor");
    assert_eq!(add.positional_arguments().map(|a| a.name.as_str()).collect::<Vec<_>>(), ["self", "other"]);

    let gelu = r.lookup("aten::gelu").expect("aten::gelu");
    assert_eq!(gelu.to_string(), "gelu(Tensor self, *, str approximate='none') -> Tensor");
    assert_eq!(gelu.qualified_name(), "aten::gelu");
    assert_eq!(r.lookup("aten::gelu.default"), Some(gelu));
    assert_eq!(r.lookup("gelu"), Some(gelu), "no namespace means aten");

    let div = r.lookup("aten::div.Scalar").expect("aten::div.Scalar");
    assert_eq!(div.to_string(), "div.Scalar(Tensor self, Scalar other) -> Tensor");

    let out = r.lookup("aten::add.out").expect("aten::add.out");
    let outs: Vec<&str> = out.out_arguments().map(|a| a.name.as_str()).collect();
    assert_eq!(outs, ["out"]);

    assert_eq!(r.lookup("aten::add.Tensr"), None);
    assert_eq!(r.lookup("aten::nonexistent_op"), None);
    assert_eq!(r.lookup("prims::add"), None);
    let add_overloads = r.overloads("aten::add");
    assert!(add_overloads.starts_with(&["Tensor", "out", "Scalar"]), "{add_overloads:?}");
    assert_eq!(r.overloads("aten::gelu"), ["out", ""], "declaration order");
    assert!(r.overloads("aten::nope").is_empty());
    assert!(r.has_namespace("aten"));
    assert!(!r.has_namespace("mylibrary"));
    let names: Vec<(&str, &str)> = r.names().collect();
    assert!(names.contains(&("aten", "gelu")));
    assert!(names.windows(2).all(|w| w[0] < w[1]), "names are sorted and unique");
}

#[test]
fn optional_and_list_suffixes_apply_left_to_right() {
    let s = parse("f(int[1]? dim=None, Tensor?[] indices, SymInt[] size, int[2] padding=0) -> ()");
    let int = Type::Base(BaseType::Int);
    assert_eq!(s.arguments[0].ty, Type::Optional(Box::new(Type::List(Box::new(int.clone()), Some(1)))));
    assert_eq!(s.arguments[1].ty, Type::List(Box::new(Type::Optional(Box::new(tensor()))), None));
    assert!(s.arguments[1].ty.is_tensor_like());
    assert!(!s.arguments[1].ty.is_single_tensor());
    assert_eq!(s.arguments[2].ty, Type::List(Box::new(Type::Base(BaseType::SymInt)), None));
    assert_eq!(s.arguments[3].ty.list_element(), Some(&int));
    assert_eq!(s.arguments[3].default.as_deref(), Some("0"));
    assert!(s.returns.is_empty());
    assert_eq!(s.arguments[0].ty.to_string(), "int[1]?");
    assert_eq!(s.arguments[1].ty.to_string(), "Tensor?[]");
}

#[test]
fn keyword_only_arguments_follow_the_star() {
    let s = parse("add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)");
    let kw: Vec<(&str, bool, bool)> = s.arguments.iter().map(|a| (a.name.as_str(), a.kwarg_only, a.is_out())).collect();
    assert_eq!(kw, [("self", false, false), ("other", false, false), ("alpha", true, false), ("out", true, true)]);
    assert_eq!(s.overload, "out");
    assert!(s.is_mutable());
    let ann = s.returns[0].annotation.as_ref().expect("return annotation");
    assert_eq!((ann.alias_set.as_slice(), ann.is_write), (&["a".to_string()][..], true));
}

#[test]
fn alias_annotations() {
    let s = parse("split.Tensor(Tensor(a -> *) self, SymInt split_size, int dim=0) -> Tensor(a)[]");
    let a = s.arguments[0].annotation.as_ref().unwrap();
    assert_eq!(a.alias_set, ["a"]);
    assert_eq!(a.alias_set_after, ["*"]);
    assert!(!a.is_write);
    assert_eq!(s.returns[0].ty, Type::List(Box::new(tensor()), None));
    assert_eq!(s.returns[0].annotation.as_ref().unwrap().to_string(), "a");

    let s = parse("f(Tensor(a|b!) x, Tensor(*) y) -> (Tensor(a!) x, Tensor b)");
    assert_eq!(s.arguments[0].annotation.as_ref().unwrap().alias_set, ["a", "b"]);
    assert!(s.arguments[0].is_write());
    assert!(!s.arguments[0].is_out(), "positional writes are not out arguments");
    assert_eq!(s.to_string(), "f(Tensor(a|b!) x, Tensor(*) y) -> (Tensor(a!) x, Tensor b)");
}

#[test]
fn namespaces_and_whitespace() {
    let s = parse("mylibrary::add_and_round_op(Tensor input) -> Tensor");
    assert_eq!((s.namespace.as_str(), s.name.as_str(), s.overload.as_str()), ("mylibrary", "add_and_round_op", ""));
    assert_eq!(s.qualified_name(), "mylibrary::add_and_round_op");
    assert_eq!(s.to_string(), "mylibrary::add_and_round_op(Tensor input) -> Tensor");

    // torch.library.define accepts free spacing; printing normalises it.
    let s =
        parse("  aten::foo.bar ( Tensor ( a! ) self ,int [ 2 ] ? k = [1, 2] , * ,bool x=True )->( Tensor a , int )  ");
    assert_eq!(s.namespace, "aten");
    assert_eq!(s.to_string(), "foo.bar(Tensor(a!) self, int[2]? k=[1, 2], *, bool x=True) -> (Tensor a, int)");
}

#[test]
fn defaults_keep_their_text_and_have_a_meaning() {
    let s = parse(r#"_test_string_default(Tensor dummy, str a="\"'\\", str b='"\'\\') -> Tensor"#);
    assert_eq!(s.arguments[1].default.as_deref(), Some(r#""\"'\\""#));
    assert_eq!(s.arguments[1].default_value(), Some(DefaultValue::Str(r#""'\"#.to_string())));
    assert_eq!(s.arguments[2].default_value(), Some(DefaultValue::Str(r#""'\"#.to_string())));

    let cases = [
        ("None", DefaultValue::None),
        ("True", DefaultValue::Bool(true)),
        ("-100", DefaultValue::Int(-100)),
        ("1e-05", DefaultValue::Float(1e-5)),
        ("0.5", DefaultValue::Float(0.5)),
        ("'linear'", DefaultValue::Str("linear".into())),
        ("[]", DefaultValue::List(vec![])),
        ("[-2,-1]", DefaultValue::List(vec![DefaultValue::Int(-2), DefaultValue::Int(-1)])),
        ("Mean", DefaultValue::Name("Mean".into())),
        ("contiguous_format", DefaultValue::Name("contiguous_format".into())),
    ];
    for (text, want) in cases {
        assert_eq!(DefaultValue::parse(text), Some(want), "{text}");
    }
    assert_eq!(DefaultValue::parse("'unterminated"), None);
    assert_eq!(DefaultValue::parse("[1,"), None);
}

#[test]
fn every_embedded_default_has_a_meaning() {
    let bad: Vec<String> = AtenRegistry::embedded()
        .schemas()
        .flat_map(|s| s.arguments.iter())
        .filter(|a| a.default.is_some() && a.default_value().is_none())
        .map(|a| format!("{a}"))
        .collect();
    assert!(bad.is_empty(), "{bad:?}");
}

#[test]
fn parse_errors_point_at_the_problem() {
    // (text, span, message)
    let cases: &[(&str, std::ops::Range<usize>, &str)] = &[
        ("", 0..0, "expected an operator name, found the end of the schema"),
        ("add.Tensor Tensor self) -> Tensor", 11..17, "expected `(` after the operator name, found `Tensor`"),
        ("add.(Tensor self) -> Tensor", 4..5, "expected an overload name after `.`, found `(`"),
        ("add(Tensr self) -> Tensor", 4..9, "unknown type `Tensr`; did you mean `Tensor`?"),
        ("add(Int self) -> Tensor", 4..7, "unknown type `Int`; did you mean `int`?"),
        ("add(Tensor) -> Tensor", 10..11, "expected an argument name after the type `Tensor`, found `)`"),
        (
            "add(Tensor self Tensor other) -> Tensor",
            16..22,
            "expected `,` or `)` after argument `self`, found `Tensor`",
        ),
        (
            "add(Tensor self)",
            16..16,
            "expected `->` and the return types after the arguments, found the end of the schema",
        ),
        ("add(Tensor self) ->", 19..19, "expected a return type, found the end of the schema"),
        ("add(Tensor self, *) -> Tensor", 17..18, "`*` must be followed by keyword-only arguments"),
        (
            "add(Tensor self, *, *, int a) -> Tensor",
            20..21,
            "a second `*`: keyword-only arguments start at the first one",
        ),
        ("add(Tensor self, Tensor self) -> Tensor", 24..28, "duplicate argument name `self`"),
        ("add(Tensor(a! self) -> Tensor", 14..18, "expected `)` to close the alias annotation, found `self`"),
        ("add(Tensor() self) -> Tensor", 11..12, "expected an alias set name like `a` or `*`, found `)`"),
        (
            "add(Tensor[](a) self) -> Tensor",
            12..13,
            "the alias annotation goes right after the base type, as in `Tensor(a)[]`",
        ),
        ("add(int[x] a) -> Tensor", 8..9, "expected `]` after the list size, found `x`"),
        ("add(int[99999999999] a) -> Tensor", 8..19, "list size `99999999999` is too large"),
        ("add(int a=) -> Tensor", 10..11, "expected a default value after `=`, found `)`"),
        ("add(str a='abc) -> Tensor", 10..25, "unterminated string in the default value"),
        ("add(int[] a=[1,2", 12..13, "unclosed `[` in the default value"),
        ("add(int[] a=[1,2) -> Tensor", 16..17, "expected `]` in the default value, found `)`"),
        (
            "add(Tensor self) -> (Tensor, Tensor",
            35..35,
            "expected `,` or `)` after a return value, found the end of the schema",
        ),
        ("add(Tensor self) -> Tensor x y", 29..30, "unexpected text after the return types"),
        (
            "add(Tensor self) -> Tensor[] (a)",
            29..30,
            "the alias annotation goes right after the base type, as in `Tensor(a)[]`",
        ),
        ("add(Tensor é) -> Tensor", 11..13, "expected an argument name after the type `Tensor`, found `é`"),
        ("ns::(Tensor a) -> Tensor", 4..5, "expected an operator name after `::`, found `(`"),
    ];
    for (text, span, message) in cases {
        match parse_schema(text) {
            Ok(s) => panic!("{text:?} parsed as {s}"),
            Err(e) => {
                assert_eq!((&e.message[..], e.span.clone()), (*message, span.clone()), "{text:?}");
                assert!(text.get(e.span.clone()).is_some(), "span on char boundaries");
            }
        }
    }
}

/// A tiny deterministic generator, so the fuzz cases are the same on every run.
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> usize {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (self.0 >> 33) as usize
    }
}

#[test]
fn no_panic_on_truncations_deletions_and_garbage() {
    let samples = [
        "add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)",
        "split.Tensor(Tensor(a -> *) self, SymInt split_size, int dim=0) -> Tensor(a)[]",
        r#"_test_string_default(Tensor dummy, str a="\"'\\", str b='"\'\\') -> Tensor"#,
        "f(int[1]? dim=None, Tensor?[] i, int[] k=[0,1]) -> (Tensor(a|b!) values, Tensor indices)",
        "ns::é(Tensor ü='ß', int[2] x=[1,(2]) -> ()",
    ];
    let mut checked = 0;
    let mut check = |text: &str| {
        if let Err(e) = parse_schema(text) {
            assert!(e.span.start <= e.span.end && text.get(e.span.clone()).is_some(), "{text:?}: {e:?}");
        }
        checked += 1;
    };
    for s in samples {
        for (i, _) in s.char_indices() {
            check(&s[..i]);
            check(&s[i..]);
            let next = s[i..].chars().next().map_or(0, char::len_utf8);
            check(&format!("{}{}", &s[..i], &s[i + next..]));
        }
    }
    let alphabet: Vec<char> = "abTensor int?[]()!|->*,.:= '\"\\0123é \t\n".chars().collect();
    let mut rng = Lcg(42);
    for _ in 0..20_000 {
        let len = rng.next() % 40;
        let text: String = (0..len).map(|_| alphabet[rng.next() % alphabet.len()]).collect();
        check(&text);
    }
    assert!(checked > 20_000);
}

#[test]
fn printing_what_parses_is_stable() {
    // Parsing the printed form gives the same schema back, even for spaced input.
    let mut rng = Lcg(7);
    let funcs: Vec<&str> = registry::NATIVE_FUNCTIONS.lines().skip(1).collect();
    for _ in 0..200 {
        let text = funcs[rng.next() % funcs.len()].replace(", ", " ,  ").replace('(', " ( ");
        let s = parse(&text);
        assert_eq!(parse(&s.to_string()), s, "{text}");
    }
}

const CUSTOM_YAML: &str = "\
# custom ops
- func: mylibrary::add_and_round_op(Tensor input) -> Tensor
  variants: function
  dispatch:
    CPU: add_and_round
- func: \"mylibrary::scale(Tensor x, *, float factor=1.0) -> Tensor\"
- variants: method
  func: my_aten_op.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
";

#[test]
fn from_yaml_reads_custom_ops() {
    let r = AtenRegistry::from_yaml(CUSTOM_YAML).expect("valid yaml");
    assert_eq!(r.len(), 3);
    let op = r.lookup("mylibrary::add_and_round_op").expect("custom op");
    assert_eq!(op.to_string(), "mylibrary::add_and_round_op(Tensor input) -> Tensor");
    assert_eq!(op.qualified_name(), "mylibrary::add_and_round_op");
    assert_eq!(r.lookup("mylibrary::scale").map(|s| s.arguments.len()), Some(2));
    assert!(r.lookup("aten::my_aten_op.out").is_some());
    assert!(r.has_namespace("mylibrary") && r.has_namespace("aten"));

    // Merged over the embedded schemas, both are found.
    let mut merged = AtenRegistry::embedded().clone();
    merged.extend(&r);
    assert!(merged.lookup("mylibrary::add_and_round_op").is_some());
    assert!(merged.lookup("aten::add.Tensor").is_some());
    assert_eq!(merged.len(), 2590 + 3);
}

#[test]
fn from_yaml_errors_point_into_the_file() {
    let yaml = "\
- func: good(Tensor x) -> Tensor
- func: bad(Tensr x) -> Tensor
- func: \"quoted(Tensor x) => Tensor\"
- variants: function
- func: good(Tensor y) -> Tensor
- just a string
";
    let errors = AtenRegistry::from_yaml(yaml).expect_err("malformed entries");
    let got: Vec<(&str, &str)> = errors.iter().map(|e| (&yaml[e.span.clone()], e.message.as_str())).collect();
    assert_eq!(
        got,
        [
            ("Tensr", "unknown type `Tensr`; did you mean `Tensor`?"),
            ("=", "expected `->` and the return types after the arguments, found `=`"),
            ("", "this entry has no `func:` key"),
            ("good(Tensor y) -> Tensor", "`aten::good` is already declared on line 1"),
            ("just a string", "expected a map with a `func:` key"),
        ]
    );
    let bad = &errors[0];
    assert_eq!(bad.span, yaml.find("Tensr").unwrap()..yaml.find("Tensr").unwrap() + 5);
    assert_eq!(errors[2].span.start, yaml.find("variants").unwrap());

    let errors = AtenRegistry::from_yaml("- func: [a, b\n").expect_err("bad yaml");
    let last = errors.last().expect("an error");
    assert_eq!(last.message, "invalid YAML: while parsing a flow sequence, expected ',' or ']'");
    assert_eq!(last.span, 14..14);

    let errors = AtenRegistry::from_yaml("func: f() -> ()\n").expect_err("not a list");
    assert_eq!(errors[0].message, "expected a list of entries, each a map with a `func:` key");
    assert!(AtenRegistry::from_yaml("").expect("empty file").is_empty());
}

#[test]
fn from_yaml_spans_are_bytes_after_non_ascii_text() {
    let yaml = "# café ünïcode\n- func: f(Tensr x) -> Tensor\n";
    let errors = AtenRegistry::from_yaml(yaml).expect_err("bad type");
    assert_eq!(&yaml[errors[0].span.clone()], "Tensr");
}

#[test]
fn from_yaml_reads_the_whole_native_functions_file() {
    let Some(yaml) = shared_yaml() else { return };
    let start = Instant::now();
    let r = AtenRegistry::from_yaml(&yaml).unwrap_or_else(|e| panic!("{:?}", &e[..e.len().min(5)]));
    eprintln!("from_yaml on native_functions.yaml: {:?}", start.elapsed());
    assert_eq!(r.len(), 2590);
    assert_eq!(r.lookup("aten::add.Tensor"), AtenRegistry::embedded().lookup("aten::add.Tensor"));
}

#[test]
fn add_replaces_by_qualified_name() {
    let mut r = AtenRegistry::new();
    assert_eq!(r.add(parse("mylibrary::op(Tensor x) -> Tensor")), None);
    let old = r.add(parse("mylibrary::op(Tensor x, int k) -> Tensor"));
    assert_eq!(old.map(|s| s.arguments.len()), Some(1));
    assert_eq!(r.len(), 1);
    assert_eq!(r.lookup("mylibrary::op").map(|s| s.arguments.len()), Some(2));
    r.add(parse("mylibrary::op.other(Tensor x) -> Tensor"));
    assert_eq!(r.overloads("mylibrary::op"), ["", "other"]);
    assert_eq!(r.names().collect::<Vec<_>>(), [("mylibrary", "op")]);
    assert_eq!(r.namespaces().collect::<Vec<_>>(), ["mylibrary"]);
}

#[test]
fn added_schemas_replace_embedded_ones_in_place() {
    let embedded = AtenRegistry::embedded();
    let mut r = embedded.clone();
    let old = r.add(parse("add.Tensor(Tensor self, Tensor other) -> Tensor")).expect("replaces the embedded one");
    assert_eq!(Some(&old), embedded.lookup("aten::add.Tensor"));
    assert_eq!(r.lookup("aten::add.Tensor").map(|s| s.arguments.len()), Some(2));
    assert_eq!(embedded.lookup("aten::add.Tensor").map(|s| s.arguments.len()), Some(3), "the embedded ones stay");
    assert_eq!(r.len(), 2590);
    assert_eq!(r.overloads("aten::add"), embedded.overloads("aten::add"), "a replacement keeps its place");
    assert_eq!(r.add(parse("add.mine(Tensor self) -> Tensor")), None);
    assert_eq!(r.add(parse("mylibrary::op(Tensor x) -> Tensor")), None);
    assert_eq!(r.len(), 2592);
    assert_eq!(r.overloads("aten::add").last(), Some(&"mine"));
    assert_eq!(r.namespaces().collect::<Vec<_>>(), ["aten", "mylibrary"]);
    let names: Vec<(&str, &str)> = r.names().collect();
    assert_eq!(names.iter().filter(|n| **n == ("aten", "add")).count(), 1);
    assert!(names.contains(&("mylibrary", "op")));

    let texts: Vec<String> = r.schemas().map(ToString::to_string).collect();
    let embedded_texts: Vec<String> = embedded.schemas().map(ToString::to_string).collect();
    let at = embedded_texts.iter().position(|t| t.starts_with("add.Tensor(")).unwrap();
    assert_eq!(texts[at], "add.Tensor(Tensor self, Tensor other) -> Tensor");
    assert_eq!(texts[2590..], ["add.mine(Tensor self) -> Tensor", "mylibrary::op(Tensor x) -> Tensor"]);
}

#[test]
fn finds_the_yaml_of_an_environment() {
    let dir = tempfile::tempdir().unwrap();
    assert_eq!(AtenRegistry::find_environment_yaml(dir.path()), None);
    let tail = "site-packages/torchgen/packaged/ATen/native/native_functions.yaml";
    for python in ["python3.9", "python3.12"] {
        let path = dir.path().join("lib").join(python).join(tail);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, "- func: f() -> ()\n").unwrap();
    }
    let found = AtenRegistry::find_environment_yaml(dir.path()).expect("found");
    assert!(found.starts_with(dir.path().join("lib/python3.12")), "{}", found.display());

    let windows = tempfile::tempdir().unwrap();
    let path = windows.path().join("Lib").join(tail);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, "").unwrap();
    assert_eq!(AtenRegistry::find_environment_yaml(windows.path()), Some(path));
}

#[test]
fn qualified_names_split_without_panicking() {
    let cases = [
        ("aten::add.Tensor", ("aten", "add", "Tensor")),
        ("gelu", ("aten", "gelu", "")),
        ("mylibrary::op", ("mylibrary", "op", "")),
        ("a.b::c.d", ("a.b", "c", "d")),
        ("::x", ("", "x", "")),
        ("x::", ("x", "", "")),
        ("a::b::c", ("a", "b::c", "")),
        ("", ("aten", "", "")),
    ];
    for (text, want) in cases {
        assert_eq!(registry::split_qualified(text), want, "{text}");
    }
    let r = AtenRegistry::embedded();
    for text in ["", ":", "::", ".", "aten::", "aten::.", "é::ü.ß"] {
        assert_eq!(r.lookup(text), None, "{text}");
        assert!(r.overloads(text).is_empty(), "{text}");
    }
    assert_eq!(r.lookup("aten::add.Tensor.x"), None);
    assert_eq!(r.overloads("aten::add.Tensor.x"), r.overloads("aten::add"), "the overload part is ignored");
}

#[test]
fn from_yaml_never_panics_on_truncated_files() {
    let yaml = format!("{CUSTOM_YAML}- func: ns::é(Tensor ü) -> Tensor\n- [a, {{b: c}}]\n");
    let mut failed = 0;
    for (i, _) in yaml.char_indices() {
        for text in [&yaml[..i], &yaml[i..]] {
            if let Err(errors) = AtenRegistry::from_yaml(text) {
                failed += 1;
                for e in errors {
                    assert!(text.get(e.span.clone()).is_some(), "{text:?}: {e:?}");
                }
            }
        }
    }
    assert!(failed > 0, "truncations break some entries");
}
