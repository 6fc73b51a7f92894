// Typeset TeX with the book's own MathJax copy, as the browser would, and report its errors.
// stdin: one JSON object per line, {"tex": ..., "display": true|false};
// stdout: one JSON object per input line, {"error": <MathJax's message> | null}.
// Usage: node tex_check.js <folder of MathJax's es5 build>   (see biasbook/book_check.py)
const path = require("path");
const readline = require("readline");

const mathjaxDir = path.resolve(process.argv[2]);
const lines = [];
readline.createInterface({input: process.stdin})
  .on("line", (line) => { if (line.trim()) lines.push(JSON.parse(line)); })
  .on("close", () => {
    require(path.join(mathjaxDir, "node-main.js")).init({
      // the same TeX input component (and so the same packages) as the book's tex-chtml.js
      loader: {paths: {mathjax: mathjaxDir}, load: ["input/tex", "adaptors/liteDOM"]},
    }).then((MathJax) => {
      for (const {tex, display} of lines) {
        const mml = MathJax.tex2mml(tex, {display});
        const error = mml.match(/data-mjx-error="([^"]*)"/);
        process.stdout.write(JSON.stringify({error: error ? error[1] : null}) + "\n");
      }
    }).catch((err) => { console.error(err); process.exit(1); });
  });
