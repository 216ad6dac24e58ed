"""`onnxsc lsp` through a real LSP client (pytest-lsp, on pygls).

Each test starts `onnxsc lsp` as a subprocess and drives it over stdio, as an editor does: it
opens and changes documents, waits for the published diagnostics and checks their ranges
(UTF-16 columns), codes, links and related information, then asks for hovers, completions,
signature help, definitions, symbols and quick fixes, and applies a fix to check the text it
gives. The robustness tests feed every prefix of the examples as changes and ask for
everything on the half-typed text; the server must answer each request (an error for a
document it does not have) and stay up.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcException
from pygls.protocol import default_converter
from pytest_lsp import ClientServerConfig, LanguageClient
from pytest_lsp.client import DEFAULT_CLIENT_FEATURES, register_lsp_features

import harness

CACHE = Path(os.environ.get("TMPDIR", "/tmp")) / f"onnxsc-lsp-test-{os.getpid()}"


def publish_diagnostics(client: LanguageClient, params: lsp.PublishDiagnosticsParams) -> None:
    """Keeps the diagnostics with the document version they were computed for."""
    client.diagnostics[params.uri] = params.diagnostics
    client.published_versions[params.uri] = params.version  # type: ignore[attr-defined]


def make_client() -> LanguageClient:
    features = dict(DEFAULT_CLIENT_FEATURES)
    features[lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS] = publish_diagnostics
    client = LanguageClient(converter_factory=default_converter)
    client.published_versions = {}  # type: ignore[attr-defined]
    register_lsp_features(client, features)
    return client


SERVER = ClientServerConfig(
    server_command=[str(harness.default_onnxsc_binary()), "lsp"],
    server_env={**os.environ, "XDG_CACHE_HOME": str(CACHE), "NO_COLOR": "1"},
    client_factory=make_client,
)

TUTORIAL = harness.EXAMPLES_DIR / "tutorial.onnxs"
TOUR = harness.EXAMPLES_DIR / "language_tour.onnxs"


@pytest_lsp.fixture(config=SERVER)
async def client(lsp_client: LanguageClient):
    await lsp_client.initialize_session(
        lsp.InitializeParams(
            capabilities=lsp.ClientCapabilities(),
            initialization_options={"debounceMs": 10},
        )
    )
    yield
    await lsp_client.shutdown_session()


# ---------------------------------------------------------------------------------------------
# Helpers


def position_of(text: str, needle: str, delta: int = 0, nth: int = 0) -> lsp.Position:
    """The LSP position (UTF-16 columns) of the nth occurrence of `needle`, plus `delta`."""
    index = -1
    for _ in range(nth + 1):
        index = text.index(needle, index + 1)
    index += delta
    line = text.count("\n", 0, index)
    start = text.rfind("\n", 0, index) + 1
    return lsp.Position(line=line, character=len(text[start:index].encode("utf-16-le")) // 2)


def offset_of(text: str, p: lsp.Position) -> int:
    lines = text.split("\n")
    before = sum(len(line) + 1 for line in lines[: p.line])
    line = lines[p.line] if p.line < len(lines) else ""
    units, i = 0, 0
    while i < len(line) and units < p.character:
        units += len(line[i].encode("utf-16-le")) // 2
        i += 1
    return before + i


def apply_edits(text: str, edits: list[lsp.TextEdit]) -> str:
    for e in sorted(edits, key=lambda e: (e.range.start.line, e.range.start.character), reverse=True):
        text = text[: offset_of(text, e.range.start)] + e.new_text + text[offset_of(text, e.range.end) :]
    return text


class Docs:
    """Open documents of one client, with their versions."""

    def __init__(self, client: LanguageClient, root: Path):
        self.client = client
        self.root = root
        self.versions: dict[str, int] = {}

    def uri(self, name: str) -> str:
        return (self.root / name).as_uri()

    def open(self, name: str, text: str, write: bool = True) -> str:
        path = self.root / name
        if write:
            path.write_text(text, encoding="utf-8")
        uri = path.as_uri()
        self.versions[uri] = 1
        self.client.text_document_did_open(
            lsp.DidOpenTextDocumentParams(
                text_document=lsp.TextDocumentItem(uri=uri, language_id="python", version=1, text=text)
            )
        )
        return uri

    def change(self, uri: str, text: str, range_: lsp.Range | None = None) -> None:
        self.versions[uri] += 1
        if range_ is None:
            change = lsp.TextDocumentContentChangeWholeDocument(text=text)
        else:
            change = lsp.TextDocumentContentChangePartial(range=range_, text=text)
        self.client.text_document_did_change(
            lsp.DidChangeTextDocumentParams(
                text_document=lsp.VersionedTextDocumentIdentifier(uri=uri, version=self.versions[uri]),
                content_changes=[change],
            )
        )

    async def diagnostics(self, uri: str, timeout: float = 30.0) -> list[lsp.Diagnostic]:
        """The diagnostics published for the document's current version."""
        want = self.versions[uri]
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while True:
            published = self.client.diagnostics.get(uri)
            version = self.published_versions.get(uri)
            if published is not None and version == want:
                return list(published)
            if loop.time() > deadline:
                raise AssertionError(f"no diagnostics for version {want} of {uri} (last: {version})")
            await asyncio.sleep(0.01)

    @property
    def published_versions(self) -> dict[str, int]:
        return self.client.published_versions  # type: ignore[attr-defined]


@pytest.fixture
def docs(client: LanguageClient, tmp_path: Path) -> Docs:
    return Docs(client, tmp_path)


def tdpp(uri: str, pos: lsp.Position) -> lsp.TextDocumentPositionParams:
    return lsp.TextDocumentPositionParams(text_document=lsp.TextDocumentIdentifier(uri=uri), position=pos)


async def hover_text(client: LanguageClient, uri: str, pos: lsp.Position) -> str:
    h = await client.text_document_hover_async(
        lsp.HoverParams(text_document=lsp.TextDocumentIdentifier(uri=uri), position=pos)
    )
    assert h is not None, f"no hover at {pos}"
    assert isinstance(h.contents, lsp.MarkupContent)
    return h.contents.value


async def completion_labels(client: LanguageClient, uri: str, pos: lsp.Position) -> dict[str, lsp.CompletionItem]:
    r = await client.text_document_completion_async(
        lsp.CompletionParams(text_document=lsp.TextDocumentIdentifier(uri=uri), position=pos)
    )
    items = r.items if isinstance(r, lsp.CompletionList) else (r or [])
    return {i.label: i for i in items}


BAD = '''from onnxscript import FLOAT, script
from onnxscript import opset18 as op
from onnxscript.function_libs.torch_lib.registration import torch_op


@script()
def f(x: FLOAT) -> FLOAT:
    "𝔽é"; y = op.Ad(x, x)
    return y


@torch_op("aten::add.Tensor")
def add(self: FLOAT, other: FLOAT, scale: float = 1.0) -> FLOAT:
    return op.Add(self, op.Mul(other, scale))
'''


# ---------------------------------------------------------------------------------------------
# Diagnostics


@pytest.mark.asyncio
async def test_diagnostics_have_ranges_codes_links_and_related_information(client: LanguageClient, docs: Docs):
    uri = docs.open("bad.onnxs", BAD)
    diags = {d.code: d for d in await docs.diagnostics(uri)}
    assert set(diags) == {"E0402", "E0505"}, diags

    unknown = diags["E0402"]
    # Columns count UTF-16 units: before `Ad`, `    "𝔽é"; y = op.` is 17 characters but 18
    # units (`𝔽` is a surrogate pair).
    assert unknown.range == lsp.Range(start=position_of(BAD, "Ad("), end=position_of(BAD, "Ad(", 2))
    assert unknown.range.start == lsp.Position(line=7, character=18)
    assert unknown.severity == lsp.DiagnosticSeverity.Error
    assert unknown.source == "onnxsc"
    assert "ONNX has no operator `Ad`" in unknown.message and "did you mean `Add`?" in unknown.message
    # The code leads to `onnxsc explain E0402`'s text.
    href = unknown.code_description.href
    assert href.startswith("file://")
    explained = Path(href[len("file://") :]).read_text(encoding="utf-8")
    explain = subprocess.run([SERVER.server_command[0], "explain", "E0402"], capture_output=True, text=True, check=True)
    assert explained == explain.stdout

    keyword = diags["E0505"]
    assert keyword.range.start == position_of(BAD, "scale")
    related = keyword.related_information
    assert related and related[0].message == "bound here"
    assert related[0].location.uri == uri
    assert related[0].location.range.start == position_of(BAD, '"aten::add.Tensor"')


@pytest.mark.asyncio
async def test_warnings_keep_their_severity_and_changes_update_diagnostics(client: LanguageClient, docs: Docs):
    text = BAD.replace("op.Ad(", "op.Add(").replace("scale", "alpha").replace("alpha: float = 1.0", "alpha: float = 2.0")
    uri = docs.open("warn.onnxs", text)
    diags = await docs.diagnostics(uri)
    assert [(d.code, d.severity) for d in diags] == [("W0502", lsp.DiagnosticSeverity.Warning)]

    # An incremental change after the non-ASCII text: `op.Add` becomes `op.Adx`.
    at = position_of(text, "Add(x, x)", 3)
    docs.change(uri, "x", lsp.Range(start=at, end=at))
    diags = await docs.diagnostics(uri)
    unknown = [d for d in diags if d.code == "E0402"]
    assert unknown and "`Addx`" in unknown[0].message
    assert unknown[0].range.start == position_of(text, "Add(x, x)")


@pytest.mark.asyncio
async def test_a_change_rechecks_the_modules_that_import_it(client: LanguageClient, docs: Docs):
    helpers = "from onnxscript import FLOAT, script\nfrom onnxscript import opset18 as op\n\n\n@script()\ndef scale(x: FLOAT) -> FLOAT:\n    return op.Mul(x, x)\n"
    main = "from onnxscript import FLOAT, script\nfrom onnxscript import opset18 as op\nfrom helpers import scale\n\n\n@script()\ndef g(x: FLOAT) -> FLOAT:\n    return scale(x, x)\n"
    h = docs.open("helpers.onnxs", helpers)
    m = docs.open("main.onnxs", main)
    assert [d.code for d in await docs.diagnostics(m)] == ["E0409"]
    # The helper takes a second parameter now, in the editor only (not saved): main is clean.
    docs.change(h, helpers.replace("def scale(x: FLOAT)", "def scale(x: FLOAT, y: FLOAT)"))
    for _ in range(300):
        await asyncio.sleep(0.02)
        if list(client.diagnostics.get(m, [None])) == []:
            break
    assert list(client.diagnostics[m]) == []


# ---------------------------------------------------------------------------------------------
# Hover


HOVER = '''from onnxscript import FLOAT, INT64, script
from onnxscript import opset18 as op
import onnxscript
from onnxscript.function_libs.torch_lib.registration import torch_op

microsoft_op = onnxscript.values.Opset(domain="com.microsoft", version=1)


@torch_op("aten::add.Tensor")
def custom_add(self: FLOAT, other: FLOAT, alpha: float = 1.0) -> FLOAT:
    n = op.Cast(self, to=INT64.dtype)
    return op.Softmax(op.Add(self, other), axis=-1)


@script()
def gelu(x: FLOAT) -> FLOAT:
    return microsoft_op.Gelu(x)
'''


@pytest.mark.asyncio
async def test_hover_shows_op_schemas_at_the_declared_version(client: LanguageClient, docs: Docs):
    uri = docs.open("hover.onnxs", HOVER)
    await docs.diagnostics(uri)
    softmax = await hover_text(client, uri, position_of(HOVER, "Softmax", 2))
    assert "since version 13" in softmax and "opset `ai.onnx` version 18" not in softmax
    assert "`op` is ai.onnx version 18" in softmax
    assert "normalized exponential" in softmax  # the schema's summary
    assert "`axis: int = -1`" in softmax
    assert "`input`: `T`" in softmax and "`output`: `T`" in softmax
    assert "tensor(float)" in softmax  # the type constraint
    gelu = await hover_text(client, uri, position_of(HOVER, "Gelu(x)", 1))
    assert "`com.microsoft` operator" in gelu and "since version 1" in gelu


@pytest.mark.asyncio
async def test_hover_shows_the_aten_schema_and_argument_mapping(client: LanguageClient, docs: Docs):
    uri = docs.open("hover.onnxs", HOVER)
    await docs.diagnostics(uri)
    text = await hover_text(client, uri, position_of(HOVER, "aten::add", 3))
    assert "add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor" in text
    assert "tensor input" in text  # the ONNX mapping of `onnxsc schema`
    assert "`self` → parameter `self`" in text and "`alpha` → parameter `alpha`" in text


@pytest.mark.asyncio
async def test_hover_shows_what_was_inferred_for_names(client: LanguageClient, docs: Docs):
    uri = docs.open("hover.onnxs", HOVER)
    await docs.diagnostics(uri)
    assert "self: FLOAT — tensor input" in await hover_text(client, uri, position_of(HOVER, "self, to="))
    assert "n: INT64 — value computed" in await hover_text(client, uri, position_of(HOVER, "n = op.Cast"))
    alpha = await hover_text(client, uri, position_of(HOVER, "alpha: float"))
    assert "alpha: float = 1.0 — attribute (FLOAT)" in alpha
    assert "opset `com.microsoft` version 1" in await hover_text(client, uri, position_of(HOVER, "microsoft_op.Gelu"))


# ---------------------------------------------------------------------------------------------
# Completion and signature help


@pytest.mark.asyncio
async def test_completion_after_an_opset_lists_its_operators_with_versions(client: LanguageClient, docs: Docs):
    # As in an editor: the file parsed before `op.` was typed.
    uri = docs.open("complete.onnxs", HOVER)
    await docs.diagnostics(uri)
    text = HOVER.replace("    return microsoft_op.Gelu(x)", "    return op.")
    docs.change(uri, text)
    await docs.diagnostics(uri)
    items = await completion_labels(client, uri, position_of(text, "return op.", len("return op.")))
    assert items["Softmax"].detail == "ai.onnx since version 13"
    assert "Relu" in items and "Gelu" not in items  # Gelu is ai.onnx 20, after opset 18
    text2 = text.replace("return op.", "return microsoft_op.")
    docs.change(uri, text2)
    await docs.diagnostics(uri)
    items = await completion_labels(client, uri, position_of(text2, "microsoft_op.", len("microsoft_op."), nth=1))
    assert items["Gelu"].detail == "com.microsoft since version 1"
    # A document that never parsed: its names come from the text before the syntax error.
    fresh = docs.open("fresh.onnxs", text)
    await docs.diagnostics(fresh)
    items = await completion_labels(client, fresh, position_of(text, "return op.", len("return op.")))
    assert "Softmax" in items


@pytest.mark.asyncio
async def test_completion_of_attributes_torch_op_names_and_imports(client: LanguageClient, docs: Docs):
    uri = docs.open("hover.onnxs", HOVER)
    await docs.diagnostics(uri)
    # Inside `op.Softmax(`: its attributes, with types and defaults.
    text = HOVER.replace("axis=-1)", ")")
    docs.change(uri, text)
    at = position_of(text, "op.Add(self, other), ", len("op.Add(self, other), "))
    items = await completion_labels(client, uri, at)
    assert items["axis="].detail == "axis: int = -1"
    # Inside `@torch_op("`: aten names with overloads, and declared custom operators.
    text = HOVER.replace('@torch_op("aten::add.Tensor")', '@torch_op("aten::ad")') + (
        '\ntorch.library.define("mylibrary::add_and_round_op", "(Tensor input) -> Tensor")\n'
    )
    docs.change(uri, text)
    items = await completion_labels(client, uri, position_of(text, "aten::ad", len("aten::ad")))
    assert {"aten::add.Tensor", "aten::add.Scalar", "aten::addmm"} <= set(items)
    assert items["aten::add.Tensor"].detail.startswith("add.Tensor(Tensor self, Tensor other")
    custom = text.replace('"aten::ad"', '"mylib"')
    docs.change(uri, custom)
    items = await completion_labels(client, uri, position_of(custom, '"mylib', len('"mylib')))
    assert "mylibrary::add_and_round_op" in items
    # `from onnxscript import `: opsets and tensor types.
    imports = "from onnxscript import \n"
    docs.change(uri, imports)
    items = await completion_labels(client, uri, lsp.Position(line=0, character=len(imports) - 1))
    assert {"opset18", "opset_ai_onnx_ml3", "FLOAT", "BFLOAT16", "script"} <= set(items)


SIGNATURES = '''from onnxscript import FLOAT, script
from onnxscript import opset18 as op
import helpers


@script()
def local(x: FLOAT, factor: float = 2.0) -> FLOAT:
    return op.Mul(x, op.CastLike(factor, x))


@script()
def g(a: FLOAT, b: FLOAT) -> FLOAT:
    c = op.Gemm(a, b, a, alpha=2.0)
    d = local(c, factor=3.0)
    return helpers.scale(d)
'''
HELPERS = 'from onnxscript import FLOAT, script\nfrom onnxscript import opset18 as op\n\nSCALE = 2.0\n\n\n@script()\ndef scale(x: FLOAT, by: float = SCALE) -> FLOAT:\n    """Multiplies by a constant."""\n    return op.Mul(x, op.CastLike(by, x))\n'


@pytest.mark.asyncio
async def test_signature_help_for_ops_and_functions(client: LanguageClient, docs: Docs):
    docs.open("helpers.onnxs", HELPERS)
    uri = docs.open("main.onnxs", SIGNATURES)
    assert await docs.diagnostics(uri) == []

    async def signature(pos: lsp.Position) -> tuple[str, str | None]:
        h = await client.text_document_signature_help_async(
            lsp.SignatureHelpParams(text_document=lsp.TextDocumentIdentifier(uri=uri), position=pos)
        )
        assert h is not None
        sig = h.signatures[0]
        active = h.active_parameter
        label = sig.parameters[active].label if active is not None else None
        if isinstance(label, tuple):
            label = sig.label[label[0] : label[1]]
        return sig.label, label

    label, param = await signature(position_of(SIGNATURES, "b, a, alpha"))
    assert label.startswith("Gemm(A: T, B: T, C: T = None, *, alpha: float = 1.0")
    assert param == "B: T"
    _, param = await signature(position_of(SIGNATURES, "alpha=2.0", 3))
    assert param == "alpha: float = 1.0"
    label, param = await signature(position_of(SIGNATURES, "factor=3.0", 2))
    assert label == "local(x: FLOAT, factor: float = 2.0)" and param == "factor: float = 2.0"
    label, param = await signature(position_of(SIGNATURES, "helpers.scale(d)", len("helpers.scale(")))
    assert label == "scale(x: FLOAT, by: float = SCALE)" and param == "x: FLOAT"


# ---------------------------------------------------------------------------------------------
# Navigation


@pytest.mark.asyncio
async def test_go_to_definition_across_modules(client: LanguageClient, docs: Docs):
    h = docs.open("helpers.onnxs", HELPERS)
    text = SIGNATURES.replace("import helpers\n", "import helpers\nfrom helpers import SCALE\n").replace(
        "alpha=2.0", "alpha=SCALE"
    )
    uri = docs.open("main.onnxs", text)
    assert await docs.diagnostics(uri) == []

    async def definition(pos: lsp.Position) -> lsp.Location:
        r = await client.text_document_definition_async(
            lsp.DefinitionParams(text_document=lsp.TextDocumentIdentifier(uri=uri), position=pos)
        )
        assert isinstance(r, lsp.Location), r
        return r

    # A function of another module, through `helpers.scale`.
    loc = await definition(position_of(text, "scale(d)", 1))
    assert loc.uri == h and loc.range.start == position_of(HELPERS, "scale(x")
    # A constant imported from it.
    loc = await definition(position_of(text, "SCALE)"))
    assert loc.uri == h and loc.range.start == position_of(HELPERS, "SCALE = ")
    # A function of this module, and the opset declaration.
    loc = await definition(position_of(text, "local(c"))
    assert loc.uri == uri and loc.range.start == position_of(text, "local(x")
    loc = await definition(position_of(text, "op.Gemm"))
    assert loc.uri == uri and loc.range.start == position_of(text, "op\n")
    # A parameter, from its use.
    loc = await definition(position_of(text, "a, b, a", 0))
    assert loc.range.start == position_of(text, "a: FLOAT")


async def document_symbols(client: LanguageClient, docs: Docs, name: str, text: str) -> list:
    """The symbols of `text`, opened as `name`, once it is checked."""
    uri = docs.open(name, text)
    await docs.diagnostics(uri)
    return await client.text_document_document_symbol_async(
        lsp.DocumentSymbolParams(text_document=lsp.TextDocumentIdentifier(uri=uri))
    )


@pytest.mark.asyncio
async def test_document_symbols(client: LanguageClient, docs: Docs):
    symbols = {s.name: s for s in await document_symbols(client, docs, "hover.onnxs", HOVER)}
    assert symbols["custom_add"].kind == lsp.SymbolKind.Function
    assert symbols["custom_add"].range.end.line > symbols["custom_add"].range.start.line + 2  # the body
    assert symbols["microsoft_op"].kind == lsp.SymbolKind.Namespace
    assert symbols["op"].kind == lsp.SymbolKind.Namespace
    assert symbols["gelu"].detail == "gelu(x: FLOAT) -> FLOAT"


@pytest.mark.asyncio
async def test_document_symbols_include_the_functions_of_a_module_level_if(client: LanguageClient, docs: Docs):
    # torchlib's shape: a translation for each PyTorch version.
    versioned = (harness.REPO_ROOT / "tests/cases/errors/module_if_defines_functions.onnxs").read_text(encoding="utf-8")
    r = await document_symbols(client, docs, "versioned.onnxs", versioned)
    assert [s.name for s in r] == ["op", "aten_chunk", "aten_chunk", "g"]
    assert [s.range.start.line for s in r if s.name == "aten_chunk"] == [10, 16]


# ---------------------------------------------------------------------------------------------
# Quick fixes


@pytest.mark.asyncio
async def test_quick_fixes_apply_and_clear_their_diagnostics(client: LanguageClient, docs: Docs):
    uri = docs.open("bad.onnxs", BAD)
    text = BAD
    for _ in range(2):
        diags = await docs.diagnostics(uri)
        assert diags
        d = diags[0]
        actions = await client.text_document_code_action_async(
            lsp.CodeActionParams(
                text_document=lsp.TextDocumentIdentifier(uri=uri),
                range=d.range,
                context=lsp.CodeActionContext(diagnostics=[d]),
            )
        )
        assert actions, f"no quick fix for {d.code}"
        action = actions[0]
        assert action.kind == lsp.CodeActionKind.QuickFix
        text = apply_edits(text, action.edit.changes[uri])
        docs.change(uri, text)
    assert "op.Add(x, x)" in text and "alpha: float = 1.0" in text and "scale" not in text
    assert await docs.diagnostics(uri) == []


# ---------------------------------------------------------------------------------------------
# Robustness


@pytest.mark.asyncio
async def test_unknown_documents_get_error_responses(client: LanguageClient, docs: Docs):
    uri = (docs.root / "never_opened.onnxs").as_uri()
    with pytest.raises(JsonRpcException, match="unknown document"):
        await client.text_document_hover_async(
            lsp.HoverParams(text_document=lsp.TextDocumentIdentifier(uri=uri), position=lsp.Position(line=0, character=0))
        )
    with pytest.raises(JsonRpcException, match="unknown document"):
        await client.text_document_document_symbol_async(
            lsp.DocumentSymbolParams(text_document=lsp.TextDocumentIdentifier(uri=uri))
        )
    # The server is still there.
    ok = docs.open("ok.onnxs", HELPERS)
    assert await docs.diagnostics(ok) == []


async def every_request(client: LanguageClient, uri: str, pos: lsp.Position) -> None:
    doc = lsp.TextDocumentIdentifier(uri=uri)
    await asyncio.gather(
        client.text_document_hover_async(lsp.HoverParams(text_document=doc, position=pos)),
        client.text_document_completion_async(lsp.CompletionParams(text_document=doc, position=pos)),
        client.text_document_signature_help_async(lsp.SignatureHelpParams(text_document=doc, position=pos)),
        client.text_document_definition_async(lsp.DefinitionParams(text_document=doc, position=pos)),
        client.text_document_document_symbol_async(lsp.DocumentSymbolParams(text_document=doc)),
        client.text_document_code_action_async(
            lsp.CodeActionParams(
                text_document=doc, range=lsp.Range(start=pos, end=pos), context=lsp.CodeActionContext(diagnostics=[])
            )
        ),
    )


@pytest.mark.asyncio
@pytest.mark.parametrize("example", [TUTORIAL, TOUR], ids=lambda p: p.name)
async def test_every_prefix_of_the_examples_as_changes(client: LanguageClient, docs: Docs, example: Path):
    full = example.read_text(encoding="utf-8")
    uri = docs.open(example.name, "", write=False)
    for n in range(len(full) + 1):
        prefix = full[:n]
        docs.change(uri, prefix)
        # Every request, at the cursor, on a sample of the prefixes and at every line end.
        if n % 23 == 0 or full[n - 1 : n] == "\n":
            end = position_of(prefix + "\0", "\0")
            await every_request(client, uri, end)
    diags = await docs.diagnostics(uri)
    assert [d for d in diags if d.severity == lsp.DiagnosticSeverity.Error] == []
