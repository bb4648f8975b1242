"""The diagram is generated from the compiled graph, and the docs (how the loop decides,
the architecture) show the current one."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from tether import build_graph
from tether.decisions.routing import EDGE_LABELS
from tether.graph.diagram import mermaid

ROOT = Path(__file__).parent.parent


@pytest.mark.parametrize("document", ["docs/concepts/loop.md", "docs/architecture.md"])
def test_the_documents_show_the_current_diagram(document: str) -> None:
    text = (ROOT / document).read_text(encoding="utf-8")
    blocks = re.findall(r"```mermaid\n(.*?)\n```", text, re.S)
    assert mermaid().rstrip("\n") in blocks


def test_diagram_has_every_node_and_edge_of_the_compiled_graph() -> None:
    drawn = build_graph().get_graph()
    text = mermaid()
    for node in drawn.nodes:
        assert re.search(rf"^\s*{node}[(\[]", text, re.M), node
    for edge in drawn.edges:
        arrow = rf"{edge.source} (-->|-\. &nbsp;.*?&nbsp; \.->) {edge.target};"
        assert re.search(arrow, text), (edge.source, edge.target)


def test_every_conditional_edge_is_labelled() -> None:
    text = mermaid()
    for (source, target), label in EDGE_LABELS.items():
        assert f"{source} -. &nbsp;{label}&nbsp; .-> {target};" in text
