import { useMemo } from "react";
import { html } from "@codemirror/lang-html";
import { liquid } from "@codemirror/lang-liquid";
// EditorView through the wrapper, which re-exports @codemirror/view: one copy of CodeMirror.
import CodeMirror, { Decoration, EditorView } from "@uiw/react-codemirror";

interface CodeEditorProps {
  /** The editor's accessible name (its content is a `textbox`), also shown as its label. */
  label: string;
  value: string;
  onChange: (value: string) => void;
  /** Liquid over HTML for an HTML body; Liquid alone for a subject or a text body. */
  language: "liquid-html" | "liquid";
  /** Variable names offered as completions inside `{{ }}`. */
  variables?: readonly string[];
  readOnly?: boolean;
  /** One line (a subject): no line numbers, no folding. */
  singleLine?: boolean;
  /** Lines (from 1) a problem was reported at: marked in the editor. */
  problemLines?: readonly number[];
}

const problemLine = Decoration.line({ class: "cm-problem-line" });

/**
 * A CodeMirror 6 editor for a template's Liquid source, with syntax highlighting and completion
 * of its variables. CodeMirror's content element is a contenteditable `textbox`, named here with
 * aria-label because a <label for> cannot point into it.
 */
export function CodeEditor({ label, value, onChange, language, variables = [], readOnly = false, singleLine = false, problemLines = [] }: CodeEditorProps) {
  const variableKey = variables.join("\n");
  const problemKey = problemLines.join(",");
  const extensions = useMemo(() => {
    const completions = variableKey === "" ? [] : variableKey.split("\n").map((name) => ({ label: name, type: "variable" }));
    return [
      language === "liquid-html" ? liquid({ base: html(), variables: completions }) : liquid({ variables: completions }),
      typeOverPercentBrace,
      typeOverClosingTag,
      EditorView.lineWrapping,
      EditorView.contentAttributes.of({ "aria-label": label }),
      // Recomputed as the document changes, so a mark never points past its end.
      EditorView.decorations.of((view) => {
        const lines = problemKey === "" ? [] : [...new Set(problemKey.split(",").map(Number))].sort((a, b) => a - b);
        const doc = view.state.doc;
        return Decoration.set(lines.filter((line) => line >= 1 && line <= doc.lines).map((line) => problemLine.range(doc.line(line).from)));
      }),
    ];
  }, [language, label, variableKey, problemKey]);
  return (
    <div className={`code-editor${singleLine ? " code-editor--single" : ""}`}>
      <span className="field__label" aria-hidden="true">
        {label}
      </span>
      <CodeMirror
        value={value}
        onChange={onChange}
        extensions={extensions}
        editable={!readOnly}
        readOnly={readOnly}
        // Tab and Shift-Tab move the keyboard's focus, as in any other field, rather than indent:
        // otherwise a keyboard user could not leave an editor, and Tab in the Subject would edit it
        // (and save a draft) just by passing through. Mod-] and Mod-[ indent, as CodeMirror's
        // accessible default has it.
        indentWithTab={false}
        basicSetup={singleLine ? { lineNumbers: false, foldGutter: false, highlightActiveLine: false, highlightActiveLineGutter: false } : { foldGutter: false }}
        minHeight={singleLine ? undefined : "12rem"}
        maxHeight={singleLine ? undefined : "28rem"}
      />
    </div>
  );
}

/**
 * lang-liquid closes a tag as it is opened (`{` then `%` gives `{%|%}`), but typing its `%}`
 * afterwards, as anyone who writes Liquid does, would write a second one: `{% endif %}%}`, saved
 * with the draft. Here a typed `%` or `}` steps over the same character the editor wrote.
 */
const typeOverPercentBrace = EditorView.inputHandler.of((view, from, to, text) => {
  if (from !== to || (text !== "%" && text !== "}")) return false;
  const doc = view.state.doc;
  const ahead = doc.sliceString(from, from + 2);
  const closing = text === "%" ? ahead === "%}" : ahead.startsWith("}") && doc.sliceString(from - 1, from) === "%";
  if (!closing) return false;
  view.dispatch({ selection: { anchor: from + 1 }, scrollIntoView: true, userEvent: "input.type" });
  return true;
});

/**
 * lang-html closes an element as it is opened (`<p>` gives `<p>|</p>`), but typing its closing
 * tag afterwards, as anyone who writes HTML by hand does, would write a second one:
 * `<p>hi</p></p>`. Here the `>` that finishes a typed `</p` in front of the `</p>` the editor
 * wrote steps over that one instead, as typeOverPercentBrace does for Liquid's `%}`.
 */
const typeOverClosingTag = EditorView.inputHandler.of((view, from, to, text) => {
  if (from !== to || text !== ">") return false;
  const line = view.state.doc.lineAt(from);
  const typed = /<\/([A-Za-z][\w:.-]*)$/.exec(line.text.slice(0, from - line.from));
  if (!typed) return false;
  const closing = `</${typed[1]}>`;
  if (view.state.doc.sliceString(from, from + closing.length) !== closing) return false;
  view.dispatch({ changes: { from, to: from + closing.length, insert: ">" }, selection: { anchor: from + 1 }, scrollIntoView: true, userEvent: "input.type" });
  return true;
});
