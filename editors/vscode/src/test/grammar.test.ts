import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import * as path from "node:path";
import { describe, it } from "node:test";

// The compiled test runs from out/test; the JSON files sit at the package root.
const root = path.join(__dirname, "..", "..");
const readJSON = (name: string) => JSON.parse(fs.readFileSync(path.join(root, name), "utf8"));

const LINE = 'See @[Fix \\] it](dsh-session:IjJi) and @src/a.ts, @"my file.md" or dsh-session:Ik0i; a@b.c';

describe("dsh-prompt language files", () => {
  it("treats a whole mention as one word", () => {
    const re = new RegExp(readJSON("language-configuration.json").wordPattern, "g");
    const words: string[] = [...(LINE.match(re) ?? [])];
    assert.ok(words.includes("@[Fix \\] it](dsh-session:IjJi)"), JSON.stringify(words));
    assert.ok(words.includes('@"my file.md"'), JSON.stringify(words));
  });

  it("highlights session mentions, bare URIs and file mentions", () => {
    const repo = readJSON("syntaxes/dsh-prompt.tmLanguage.json").repository as Record<string, { match: string }>;
    const matches = (key: string): string[] => [...(LINE.match(new RegExp(repo[key].match, "g")) ?? [])];
    assert.deepEqual(matches("session-mention"), ["@[Fix \\] it](dsh-session:IjJi)"]);
    assert.deepEqual(matches("session-uri"), ["dsh-session:IjJi", "dsh-session:Ik0i"]);
    // "a@b.c" is not a mention: "@" must start the line or follow whitespace.
    assert.deepEqual(matches("file-mention"), ["@src/a.ts,", '@"my file.md"']);
  });

  it("is contributed for *.prompt.md and *.dshprompt", () => {
    const pkg = readJSON("package.json");
    const lang = pkg.contributes.languages.find((l: { id: string }) => l.id === "dsh-prompt");
    assert.deepEqual(lang.filenamePatterns, ["*.prompt.md"]);
    assert.deepEqual(lang.extensions, [".dshprompt"]);
    const grammar = pkg.contributes.grammars.find((g: { language: string }) => g.language === "dsh-prompt");
    assert.equal(readJSON(grammar.path).scopeName, grammar.scopeName);
  });
});
