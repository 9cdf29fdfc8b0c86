#!/usr/bin/env python3
# Tests of core/ops/accel-mkops.py, the generator of the op parameter
# tables and constructors and of the declared ops' headers: what it writes
# from annotated headers and from op declarations (accel-NAME.op), and that
# a malformed annotation or declaration stops the build with an error
# naming the file, the line and what is wrong (rather than a table that
# differs from the declaration).
#
#   mkops.py SOURCE_ROOT
#
# SPDX-License-Identifier: LGPL-2.1-or-later

import os
import random
import string
import subprocess
import sys
import tempfile
import unittest

ROOT = sys.argv.pop(1) if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), '..', '..')
MKOPS = os.path.join(ROOT, 'core', 'ops', 'accel-mkops.py')

HEADER = '''#pragma once
G_DECLARE_FINAL_TYPE (AccelThing, accel_thing, ACCEL, THING, AccelOp)

struct _AccelThing {
  AccelOp parent_instance;

  /*< public >*/
  /* The input, any dtype. */
  AccelBuffer *src; /*< read required >*/
  /* The output: the
   * same shape. */
  AccelBuffer *dst; /*< write >*/
  /* How many. */
  int count; /*< min=1 max=G_MAXINT default=%(count)s >*/
  /* Whether to. */
  gboolean flag; /*< default=TRUE >*/
  /* The kind. */
  AccelThingKind kind; /*< default=ACCEL_THING_KIND_A >*/
  /* Named otherwise. */
  double the_scale; /*< name=scale min=-1.0 max=1.0 default=0.5 allow-nan >*/
  int not_a_param;
  %(extra)s
};

ACCEL_API
AccelOp *accel_thing_new (AccelBuffer *src, AccelBuffer *dst, int count);
'''


def run(headers):
    with tempfile.TemporaryDirectory() as out:
        c, h = os.path.join(out, 'tables.c'), os.path.join(out, 'tables-private.h')
        proc = subprocess.run([sys.executable, MKOPS, c, h] + headers, capture_output=True, text=True)
        body = ''
        if proc.returncode == 0:
            for path in (c, h):
                with open(path, encoding='utf-8') as f:
                    body += f.read()
        return proc.returncode, body, proc.stderr


def declaration(header_text):
    """The accel-NAME.op that declares what HEADER declares."""
    struct = header_text.split('/*< public >*/\n', 1)[1].split('\n};', 1)[0]
    fields = '\n'.join(line[2:] for line in struct.split('\n'))
    return ('/* SPDX-License-Identifier: LGPL-2.1-or-later */\n#include "../accel-op.h"\n\n'
            'op AccelThing : AccelOp\nnew (src, dst, count)\n\n' + fields + '\n')


def headers(declarations):
    with tempfile.TemporaryDirectory() as out:
        proc = subprocess.run([sys.executable, MKOPS, '--headers', out] + declarations,
                              capture_output=True, text=True)
        written = {}
        if proc.returncode == 0:
            for name in os.listdir(out):
                with open(os.path.join(out, name), encoding='utf-8') as f:
                    written[name] = f.read()
        return proc.returncode, written, proc.stderr


class MkOps(unittest.TestCase):
    def header(self, tmp, name='accel-thing.h', count=None, extra=''):
        path = os.path.join(tmp, name)
        with open(path, 'w') as f:
            f.write(HEADER % {'count': count if count is not None else random.randint(1, 1000), 'extra': extra})
        return path

    def test_table_and_constructor(self):
        with tempfile.TemporaryDirectory() as tmp:
            count = random.randint(1, 1 << 20)
            rc, out, err = run([self.header(tmp, count=count)])
            self.assertEqual(rc, 0, err)
            self.assertIn('extern const AccelOpParam _accel_thing_params[6];', out)
            self.assertIn('ACCEL_OP_BUFFER (AccelThing, src, "src", "The input, any dtype.", '
                          'ACCEL_ACCESS_READ, ACCEL_OP_PARAM_REQUIRED)', out)
            # A blurb over two comment lines is one line of text.
            self.assertIn('"The output: the same shape.", ACCEL_ACCESS_WRITE, 0)', out)
            self.assertIn(f'ACCEL_OP_INT (AccelThing, count, "count", "How many.", 1, G_MAXINT, {count})', out)
            self.assertIn('ACCEL_OP_BOOLEAN (AccelThing, flag, "flag", "Whether to.", TRUE)', out)
            self.assertIn('ACCEL_OP_ENUM (AccelThing, kind, "kind", "The kind.", accel_thing_kind_get_type, '
                          'ACCEL_THING_KIND_A)', out)
            self.assertIn('ACCEL_OP_DOUBLE (AccelThing, the_scale, "scale", "Named otherwise.", -1.0, 1.0, 0.5, '
                          'ACCEL_OP_PARAM_ALLOW_NAN)', out)
            self.assertNotIn('not_a_param', out)
            self.assertIn('accel_thing_new (AccelBuffer *src, AccelBuffer *dst, int count)', out)
            self.assertIn(' * @dst: (transfer none) (nullable): The output: the same shape.', out)
            self.assertIn('return g_object_new (ACCEL_TYPE_THING, "src", src, "dst", dst, "count", count, NULL);',
                          out)

    def test_declaration_over_two_lines(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = self.header(tmp)
            with open(path) as f:
                text = f.read()
            with open(path, 'w') as f:
                f.write(text.replace('ACCEL, THING,', 'ACCEL, THING,\n                      '))
            rc, out, err = run([path])
            self.assertEqual(rc, 0, err)
            self.assertIn('_accel_thing_params[6]', out)

    def test_family(self):
        with tempfile.TemporaryDirectory() as tmp:
            family = os.path.join(tmp, 'accel-family-private.h')
            with open(family, 'w') as f:
                f.write('typedef struct {\n  AccelOp parent_instance;\n  /* Shared. */\n'
                        '  AccelBuffer *shared; /*< read >*/\n} AccelThingFields;\n')
            op = self.header(tmp, extra='AccelBuffer *shared; /*< family=AccelThingFields >*/')
            rc, out, err = run([op, family])
            self.assertEqual(rc, 0, err)
            self.assertIn('_accel_thing_fields_params[1]', out)
            self.assertIn('_accel_thing_params[6]', out)
            # The family's field is not in the op's own table.
            self.assertNotIn('ACCEL_OP_BUFFER (AccelThing, shared', out)

    def test_op_declaration(self):
        with tempfile.TemporaryDirectory() as tmp:
            count = random.randint(1, 1 << 20)
            header = self.header(tmp, count=count)
            with open(header) as f:
                text = f.read()
            op = os.path.join(tmp, 'accel-thing.op')
            with open(op, 'w') as f:
                f.write(declaration(text))
            rc, written, err = headers([op])
            self.assertEqual(rc, 0, err)
            self.assertEqual(list(written), ['accel-thing.h'])
            h = written['accel-thing.h']
            self.assertIn('#define ACCEL_TYPE_THING (accel_thing_get_type ())', h)
            self.assertIn('G_DECLARE_FINAL_TYPE (AccelThing, accel_thing, ACCEL, THING, AccelOp)', h)
            self.assertIn('struct _AccelThing {\n  AccelOp parent_instance;\n\n  /*< public >*/\n'
                          '  /* The input, any dtype. */\n  AccelBuffer *src; /*< read required >*/', h)
            # The constructor's argument types are its fields'.
            self.assertIn('AccelOp *accel_thing_new (AccelBuffer *src, AccelBuffer *dst, int count);', h)
            # The declaration gives the same table and constructor as the
            # header it stands for.
            rc_h, from_header, err_h = run([header])
            rc_o, from_op, err_o = run([op])
            self.assertEqual((rc_h, rc_o), (0, 0), err_h + err_o)
            self.assertIn(f'1, G_MAXINT, {count})', from_op)
            self.assertEqual(from_op, from_header)

    def test_op_declaration_refused(self):
        with tempfile.TemporaryDirectory() as tmp:
            text = declaration(HEADER % {'count': 1, 'extra': ''})
            cases = [
                (text.replace('op AccelThing : AccelOp', 'op AccelThing'), 4, 'expected `op AccelFoo'),
                (text.replace('new (src, dst, count)', 'new (src, dst, nothing)'), None, '“nothing” is no parameter'),
                (text.replace('new (src, dst, count)', 'new (src, dst,'), 5, 'without its `)`'),
                (text.replace('#include', 'include'), 2, 'expected `op AccelFoo'),
                (text.replace('AccelBuffer *src; /*< read required >*/', 'AccelBuffer *src; /*< read sometimes >*/'),
                 8, '“sometimes”'),
            ]
            for bad, line, needle in cases:
                op = os.path.join(tmp, 'accel-thing.op')
                with open(op, 'w') as f:
                    f.write(bad)
                rc, written, err = headers([op])
                self.assertEqual(rc, 1, bad)
                self.assertIn(needle, err)
                self.assertIn(f'{op}:{line}:' if line else op, err)

    def test_image(self):
        with tempfile.TemporaryDirectory() as tmp:
            op = os.path.join(tmp, 'accel-thing.op')
            with open(op, 'w') as f:
                f.write('op AccelThing : AccelOp\nnew (AccelBuffer *src, level)\n\n'
                        "/* The source image's buffer. */\nAccelImage src; /*< image >*/\n"
                        '/* How much. */\nint level; /*< min=0 max=9 default=3 >*/\n')
            rc, out, err = run([op])
            self.assertEqual(rc, 0, err)
            # The image's properties are the image table's: no row here.
            self.assertIn('_accel_thing_params[1]', out)
            self.assertNotIn('ACCEL_OP_BUFFER (AccelThing, src', out)
            self.assertIn('accel_thing_new (AccelBuffer *src, int level)', out)
            self.assertIn(" * @src: (transfer none) (nullable): The source image's buffer.", out)
            self.assertIn('G_TYPE_CHECK_INSTANCE_TYPE (src, accel_buffer_get_type ())', out)
            self.assertIn('return g_object_new (ACCEL_TYPE_THING, "src", src, "level", level, NULL);', out)

    def test_image_on_a_buffer(self):
        self.refused('AccelBuffer *x; /*< image >*/', '`image` is for an AccelImage field')

    def refused(self, extra, needle):
        with tempfile.TemporaryDirectory() as tmp:
            path = self.header(tmp, extra=extra)
            rc, out, err = run([path])
            self.assertEqual(rc, 1, out)
            line = HEADER.split('\n').index('  %(extra)s') + 1
            self.assertIn(f'{path}:{line}', err)
            self.assertIn(needle, err)

    def test_unknown_word(self):
        word = ''.join(random.choices(string.ascii_lowercase, k=8))
        self.refused(f'int x; /*< {word} >*/', f'“{word}”')

    def test_unknown_key(self):
        self.refused('int x; /*< colour=red >*/', '“colour”')

    def test_buffer_without_access(self):
        self.refused('AccelBuffer *x; /*< required >*/', 'each buffer needs one')

    def test_access_on_a_number(self):
        self.refused('int x; /*< read min=0 max=1 default=0 >*/', 'is for buffers')

    def test_no_blurb(self):
        self.refused('gboolean x; /*< default=FALSE >*/', 'no comment above it')

    def test_unknown_type(self):
        self.refused('float *x; /*< >*/', '“float *”')

    def test_family_not_declared(self):
        self.refused('AccelBuffer *x; /*< family=AccelNoFields >*/', 'no such field in family AccelNoFields')


if __name__ == '__main__':
    unittest.main()
