"""Re-parsing only the statements of a class body that an edit touched.

Whatever the edit, a re-parse either gives a tree whose code is the new text, made of
the same statements a full parse makes, with the layout a fresh one would have; or it
gives up, and the caller parses the whole block.
"""

from __future__ import annotations

import libcst as cst
from hypothesis import given, settings
from hypothesis import strategies as st

from gradguard.analysis.reparse import Layout, layout_of, reparse_class

CLASS = '''@decorated
class Net(nn.Module):
    """A docstring."""

    scale = 2  # a class attribute

    def __init__(self):
        super().__init__()
        self.act = nn.ReLU(inplace=True)

    # a comment between methods
    def forward(self, x):
        if x is None:
            return x
            # a comment at the end of a nested block
        y = torch.sigmoid(x)
        return self.act(y)

    @staticmethod
    def helper(x):
        return (x +
    1)
    # the class's own trailing comment

# a comment after the class

'''


def _layout(text: str) -> tuple[cst.Module, Layout]:
    tree = cst.parse_module(text)
    layout = layout_of(tree, text)
    assert layout is not None
    return tree, layout


def _statements(tree: cst.Module) -> list[cst.BaseStatement]:
    klass = tree.body[0]
    assert isinstance(klass, cst.ClassDef) and isinstance(klass.body, cst.IndentedBlock)
    return list(klass.body.body)


def _method(tree: cst.Module, name: str) -> cst.BaseStatement:
    return next(s for s in _statements(tree)
                if isinstance(s, cst.FunctionDef) and s.name.value == name)


def test_an_edit_inside_a_method_parses_that_method_and_keeps_the_others() -> None:
    tree, layout = _layout(CLASS)
    edited = CLASS.replace("        y = torch.sigmoid(x)\n",
                           "        y = torch.sigmoid(x)\n        y = y * 2\n")

    done = reparse_class(CLASS, tree, layout, edited)

    assert done is not None
    new_tree, new_layout = done
    assert new_tree.code == edited
    assert new_tree.deep_equals(cst.parse_module(edited))
    assert new_layout == layout_of(new_tree, edited)
    assert _method(new_tree, "forward") is not _method(tree, "forward")
    for name in ("__init__", "helper"):
        assert _method(new_tree, name) is _method(tree, name)


def test_a_method_added_after_another_leaves_that_one_as_it_was() -> None:
    tree, layout = _layout(CLASS)
    edited = CLASS.replace("        return self.act(y)\n",
                           "        return self.act(y)\n\n    def extra(self):\n        pass\n")

    done = reparse_class(CLASS, tree, layout, edited)

    assert done is not None
    assert done[0].deep_equals(cst.parse_module(edited))
    assert _method(done[0], "forward") is _method(tree, "forward")


def test_a_method_deleted_leaves_the_others() -> None:
    tree, layout = _layout(CLASS)
    start = CLASS.index("    @staticmethod")
    end = CLASS.index("    # the class's own")
    edited = CLASS[:start] + CLASS[end:]

    done = reparse_class(CLASS, tree, layout, edited)

    assert done is not None
    assert done[0].code == edited
    assert [s for s in _statements(done[0]) if isinstance(s, cst.FunctionDef)] == [
        _method(tree, "__init__"), _method(tree, "forward")]


def test_a_changed_header_is_not_reparsed_in_part() -> None:
    tree, layout = _layout(CLASS)
    assert reparse_class(CLASS, tree, layout, CLASS.replace("(nn.Module)", "(Base)")) is None


def test_a_half_typed_line_is_left_to_a_full_parse() -> None:
    tree, layout = _layout(CLASS)
    edited = CLASS.replace("        return self.act(y)\n", "        y = \n        return y\n")
    assert reparse_class(CLASS, tree, layout, edited) is None


FRAGMENTS = ["\n", "    ", "        ", "x", " = 1", "(", ")", ":", "#", '"""', "\\",
             "\t", "\r\n", "pass", "    def g(self):\n        pass\n", "else:", "@d\n",
             "        return x\n", "\n\n", "class "]


@settings(max_examples=400, deadline=None)
@given(st.data())
def test_a_reparse_is_a_full_parse_or_nothing(data: st.DataObject) -> None:
    text = data.draw(st.sampled_from([CLASS, CLASS.replace("\n", "\r\n"),
                                      CLASS.rstrip("\n"), CLASS.replace("    ", "\t")]))
    tree, layout = _layout(text)
    for _ in range(data.draw(st.integers(1, 4))):
        start = data.draw(st.integers(0, len(text)))
        end = data.draw(st.integers(start, min(len(text), start + 30)))
        inserted = "".join(data.draw(st.lists(st.sampled_from(FRAGMENTS), max_size=3)))
        edited = text[:start] + inserted + text[end:]
        done = reparse_class(text, tree, layout, edited)
        if done is None:
            try:
                tree = cst.parse_module(edited)
            except cst.ParserSyntaxError:
                return
            again = layout_of(tree, edited)
            if again is None:
                return
            text, layout = edited, again
            continue
        new_tree, new_layout = done
        full = cst.parse_module(edited)  # a re-parse never accepts what does not parse
        if full.code != edited:
            return  # text libcst itself does not give back (a line of a lone backslash)
        assert new_tree.code == edited
        assert _without_blank_lines(new_tree).deep_equals(_without_blank_lines(full))
        assert new_layout == layout_of(new_tree, edited)
        text, tree, layout = edited, new_tree, new_layout



class _BlankLinesDropped(cst.CSTTransformer):
    def on_leave(self, original_node: cst.CSTNode, updated_node: cst.CSTNode) -> cst.CSTNode:
        if isinstance(updated_node, cst.Module):
            return updated_node.with_changes(header=(), footer=())
        if isinstance(updated_node, cst.IndentedBlock):
            return updated_node.with_changes(footer=())
        if hasattr(updated_node, "leading_lines"):
            return updated_node.with_changes(leading_lines=())
        return updated_node


def _without_blank_lines(tree: cst.Module) -> cst.Module:
    """The tree without its blank and comment lines between statements.

    A comment line between two statements may be told to the one after it rather than to
    the footer of the block before (libcst's choice depends on the whole block); the code
    is the same either way, and the test checks that too.
    """
    return tree.visit(_BlankLinesDropped())
