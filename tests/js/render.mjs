// The Markdown renderers users meet, for the differential test
// (tests/unit/ui/test_markdown_renderers.py): reads a JSON array of Markdown
// documents on stdin and prints, for each, an object {renderer: html}.
//
// marked-lab is JupyterLab 4.6's setup (@jupyterlab/markedparser-extension: gfm, the
// gfmHeadingId and mangle extensions; a trusted output is not sanitized); markdown-it is
// VS Code's and nbviewer's (raw HTML on, linkify on); commonmark.js and markdown-it's
// commonmark preset read CommonMark as GitHub's cmark does before its sanitizer.
import { readFileSync } from "node:fs";

import * as commonmark from "commonmark";
import MarkdownIt from "markdown-it";
import { Marked } from "marked";
import { gfmHeadingId } from "marked-gfm-heading-id";
import { mangle } from "marked-mangle";

const lab = new Marked({ gfm: true });
lab.use(gfmHeadingId());
lab.use(mangle());
const gfm = new Marked({ gfm: true });
const vscode = new MarkdownIt({ html: true, linkify: true });
const strict = new MarkdownIt("commonmark");
const reader = new commonmark.Parser();
const writer = new commonmark.HtmlRenderer();

const renderers = {
  "marked-lab": (md) => lab.parse(md, { async: false }),
  "marked-gfm": (md) => gfm.parse(md, { async: false }),
  "markdown-it": (md) => vscode.render(md),
  "markdown-it-commonmark": (md) => strict.render(md),
  commonmark: (md) => writer.render(reader.parse(md)),
};

const documents = JSON.parse(readFileSync(0, "utf8"));
const out = documents.map((md) =>
  Object.fromEntries(Object.entries(renderers).map(([name, render]) => [name, render(md)])),
);
process.stdout.write(JSON.stringify(out));
