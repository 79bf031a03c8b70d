'use strict';
// A live session's node REPL (engine/live-node.c): msp-mcp writes this file into the
// session sandbox's code dir (read-only to the sandbox) and starts it with the sandbox's
// node, a random marker as its argument. Each line on stdin is a cell, {"id": n, "code":
// "...", "env": {...}} (env: set in process.env first, and kept), evaluated in this process's one global context, so that what a cell declares,
// requires or assigns stays for the next. Its outcome is one line on stdout:
//   "\x1eMSP<marker> " + {"id": n, "ok": bool, "value": "...", "error": "..."} + "\n"
// value: util.inspect of the last expression's value (a Promise's: awaited), absent for
// undefined; error: the stack of what it threw. Everything else on stdout and stderr is the
// cells' output: console, process.stdout and process.stderr write synchronously to pipes,
// so a cell's output is in the pipes before its outcome line.
const vm = require('vm');
const util = require('util');
const path = require('path');
const readline = require('readline');
const { createRequire } = require('module');

const marker = '\x1eMSP' + process.argv[2] + ' ';
const self = __filename;
process.argv.splice(1, 2);                      // the cells' argv: [node]

// What a script in a module has, as globals of the cells.
globalThis.require = createRequire(path.join(process.cwd(), '[repl]'));
globalThis.module = { exports: {}, require: globalThis.require, id: '[repl]' };
globalThis.exports = globalThis.module.exports;
globalThis.__filename = path.join(process.cwd(), '[repl]');
globalThis.__dirname = process.cwd();

const VALUE_MAX = 1 << 20;
// The line is JSON for msp-mcp's parser: no NUL, no lone surrogate, bounded.
function clean(s) {
        s = String(s);
        if (s.length > VALUE_MAX)
                s = s.slice(0, VALUE_MAX) + '... (cut at ' + VALUE_MAX + ' characters)';
        s = s.replace(/\0/g, '\ufffd');
        return typeof s.toWellFormed === 'function' ? s.toWellFormed()    // node 20
                : s.replace(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, '\ufffd');
}

// A stack without this program's and vm's frames.
function describe(e) {
        let s;
        if (e instanceof Error || (e && typeof e.stack === 'string'))
                s = e.stack || String(e);
        else
                s = 'Uncaught ' + util.inspect(e);
        return s.split('\n').filter((l) => !(/^\s+at /.test(l) &&
                (l.includes(self) || l.includes('node:vm') || l.includes('node:internal/')))).join('\n');
}

// Errors of code no cell awaits (a timer's, a promise nobody handles) are output, not
// the end of the REPL.
process.on('uncaughtException', (e) => process.stderr.write(describe(e) + '\n'));
process.on('unhandledRejection', (e) => process.stderr.write('Unhandled rejection: ' + describe(e) + '\n'));

function reply(out) {
        process.stdout.write(marker + JSON.stringify(out) + '\n');
}

let count = 0;

function compile(code, filename) {
        try {
                return new vm.Script(code, { filename });
        } catch (e) {
                // Top-level await: the code runs as an async function's body (its
                // declarations stay in it; what it assigns to globalThis stays).
                if (!(e instanceof SyntaxError) || !/\bawait\b/.test(code))
                        throw e;
                // A single expression is its value.
                for (const [head, tail] of [['(async () => (\n', '\n))()'], ['(async () => {\n', '\n})()']]) {
                        try {
                                return new vm.Script(head + code + tail, { filename, lineOffset: -1 });
                        } catch {
                                // the next form
                        }
                }
                throw e;
        }
}

async function evaluate(id, code) {
        const filename = 'cell' + ++count + '.js';
        try {
                let v = compile(code, filename).runInThisContext({ displayErrors: true });
                if (v && typeof v.then === 'function')
                        v = await v;
                const out = { id, ok: true };
                if (v !== undefined)
                        out.value = clean(util.inspect(v));
                reply(out);
        } catch (e) {
                reply({ id, ok: false, error: clean(describe(e)) });
        }
}

let queue = Promise.resolve();
readline.createInterface({ input: process.stdin, crlfDelay: Infinity }).on('line', (line) => {
        let req;
        try {
                req = JSON.parse(line);
        } catch (e) {
                return;                         // not msp-mcp's: nothing to answer
        }
        queue = queue.then(() => {
                if (req.env && typeof req.env === 'object')
                        Object.assign(process.env, req.env);
                return evaluate(req.id, String(req.code));
        });
}).on('close', () => queue.then(() => process.exit(0)));
