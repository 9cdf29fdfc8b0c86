// The TAP loop of the gjs binding tests, as taprunner.py is the Python
// ones': runs each (async) test of an object in a main loop, prints
// "ok"/"not ok" lines (with the error and its stack as comments), calls
// atEnd, and exits with the status.
//
// SPDX-License-Identifier: LGPL-2.1-or-later

import GLib from 'gi://GLib';
import System from 'system';

async function runAll(tests, prefix, atEnd) {
    const names = Object.keys(tests);
    print(`1..${names.length}`);
    let failed = 0;
    for (const [i, name] of names.entries()) {
        try {
            // eslint-disable-next-line no-await-in-loop
            await tests[name]();
            print(`ok ${i + 1} ${prefix}/${name}`);
        } catch (e) {
            failed++;
            print(`not ok ${i + 1} ${prefix}/${name}`);
            for (const line of `${e}\n${e.stack ?? ''}`.split('\n'))
                print(`# ${line}`);
        }
    }
    atEnd();
    return failed ? 1 : 0;
}

// Runs tests (name -> function, awaited in turn) as TAP lines named
// prefix/name, then atEnd(); never returns.
export function run(tests, prefix, atEnd) {
    const loop = new GLib.MainLoop(null, false);
    let status = 1;
    runAll(tests, prefix, atEnd).then(s => {
        status = s;
    }).catch(e => {
        print(`Bail out! ${e}`);
    }).finally(() => loop.quit());
    loop.run();
    System.exit(status);
}
