#!/usr/bin/env python3
# accel-mkops: writes the core op types' public headers, parameter tables
# and constructors from their declarations (accel-NAME.op), as
# gdbus-codegen writes an interface's header and code from its XML, and
# the tables and constructors of the op types whose headers are written by
# hand from those headers, as glib-mkenums writes enum types from theirs.
#
# A declaration names the type, its parent and its constructor's arguments
# (fields, whose C types are taken from them, or C arguments), after any
# one-line comments and #includes its header needs; the rest is the
# instance struct's public fields:
#
#   #include "../accel-op.h"
#
#   op AccelEigh : AccelOp
#   new (a, w, v)
#
#   /* The eigenvalues, `[n]`, ascending. */
#   AccelBuffer *w; /*< write required >*/
#
# An op declares each parameter once, as a public field of its instance
# struct (in its declaration, or in its hand-written header): a comment above the field is the property's blurb (and so its
# documentation, see introspection/accel-op-docs.c), and an annotation after
# it says the rest:
#
#   /* The eigenvalues, `[n]`, ascending. */
#   AccelBuffer *w; /*< write required >*/
#   /* Which triangle of `a` is read. */
#   gboolean lower; /*< default=TRUE >*/
#   /* The reduction axis, -1 for the last. */
#   int axis; /*< min=-64 max=63 default=-1 >*/
#
# The field's C type gives the parameter's kind (AccelBuffer *, gboolean,
# int, guint, gint64, guint64, double, char *, an Accel enum, flags with the
# word `flags`, or an object pointer). Words: read, write, readwrite (a
# buffer's access), required, allow-nan, flags, image (an AccelImage field:
# ACCEL_DEFINE_IMAGE_OP_TYPE installs its properties, so it has no table
# row, but a constructor may take its buffer); keys: name= (the property,
# else the field with - for _), min=, max=, default= (C expressions without
# spaces), type= (the get_type function, else the one the type's name
# gives), family= (the field is a parameter that the named family declares
# and installs). Fields without an annotation are not parameters here.
#
# A family is a `typedef struct { … } AccelFooFields;` in a private header
# whose fields, annotated alike, several op types lay out alike (each
# installs the family's table, `_accel_foo_fields_params`, at its own
# offset); its fields are declared there once, and an op header names
# them with family=AccelFooFields.
#
# For each op with annotated fields this writes the table
# `_<prefix>_params`, which the op's ACCEL_DEFINE_OP_TYPE() installs, and,
# where the header declares `<prefix>_new ()` whose arguments are all such
# fields (its own or its families'), that constructor and its doc comment
# (from the blurbs).
#
#   accel-mkops.py --headers OUTDIR DECLARATION...
#   accel-mkops.py OUTPUT.c OUTPUT-private.h DECLARATION-OR-HEADER...
#
# SPDX-License-Identifier: LGPL-2.1-or-later

import os
import re
import sys

KINDS = {
    'AccelBuffer *': 'BUFFER',
    'gboolean': 'BOOLEAN',
    'int': 'INT',
    'gint': 'INT',
    'guint': 'UINT',
    'gint64': 'INT64',
    'guint64': 'UINT64',
    'double': 'DOUBLE',
    'char *': 'STRING',
}
ACCESS = {'read': 'ACCEL_ACCESS_READ', 'write': 'ACCEL_ACCESS_WRITE',
          'readwrite': 'ACCEL_ACCESS_READ_WRITE'}
FLAGS = {'required': 'ACCEL_OP_PARAM_REQUIRED', 'allow-nan': 'ACCEL_OP_PARAM_ALLOW_NAN'}


class Error(Exception):
    pass


def snake(camel):
    """AccelConvLayout -> accel_conv_layout, as glib-mkenums names types."""
    return re.sub(r'(?<=[a-z0-9])(?=[A-Z])', '_', camel).lower()


def c_string(text):
    return '"' + text.replace('\\', '\\\\').replace('"', '\\"') + '"'


class Param:
    def __init__(self, where, ctype, field, blurb, words):
        self.where = where
        self.field = field
        self.ctype = ctype
        self.blurb = blurb
        self.name = field.replace('_', '-')
        self.flags = []
        self.access = None
        self.values = {}
        self.get_type = None
        self.family = None
        self.arg_ctype = ctype
        is_flags = False
        is_image = False
        for word in words:
            key, eq, value = word.partition('=')
            if eq:
                if key == 'name':
                    self.name = value
                elif key in ('min', 'max', 'default'):
                    self.values[key] = value
                elif key == 'type':
                    self.get_type = value
                elif key == 'family':
                    self.family = value
                else:
                    raise Error(f'{where}: unknown key “{key}”')
            elif word in ACCESS:
                self.access = ACCESS[word]
            elif word in FLAGS:
                self.flags.append(FLAGS[word])
            elif word == 'flags':
                is_flags = True
            elif word == 'image':
                is_image = True
            else:
                raise Error(f'{where}: unknown word “{word}”')
        if self.family:
            # Declared (kind, blurb and all) by the family's struct.
            if words != [f'family={self.family}']:
                raise Error(f'{where}: a family field says nothing but family=')
            return
        if is_image:
            # An image's properties (its buffer, `src` or `dst`, and its
            # format and sizes) are installed by ACCEL_DEFINE_IMAGE_OP_TYPE;
            # a constructor takes its buffer.
            if ctype != 'AccelImage' or len(words) != 1:
                raise Error(f'{where}: `image` is for an AccelImage field, and says nothing else')
            self.kind = 'IMAGE'
            self.arg_ctype = 'AccelBuffer *'
            self.get_type = 'accel_buffer_get_type'
        elif ctype in KINDS:
            self.kind = KINDS[ctype]
        elif re.fullmatch(r'Accel\w+', ctype):
            self.kind = 'FLAGS' if is_flags else 'ENUM'
        elif re.fullmatch(r'[A-Z]\w+ \*', ctype):
            self.kind = 'OBJECT'
        else:
            raise Error(f'{where}: no parameter kind for the C type “{ctype}”')
        if self.kind in ('ENUM', 'FLAGS', 'OBJECT') and self.get_type is None:
            self.get_type = snake(ctype.rstrip(' *')) + '_get_type'
        if (self.kind == 'BUFFER') != (self.access is not None):
            raise Error(f'{where}: read, write or readwrite is for buffers, and each buffer needs one')
        if not blurb:
            raise Error(f'{where}: the field has no comment above it to be its blurb')

    def entry(self, type_name):
        flags = ' | '.join(self.flags) or '0'
        v = self.values
        head = f'{type_name}, {self.field}, {c_string(self.name)}, {c_string(self.blurb)}'
        if self.kind == 'BUFFER':
            return f'ACCEL_OP_BUFFER ({head}, {self.access}, {flags})'
        if self.kind == 'BOOLEAN':
            return f'ACCEL_OP_BOOLEAN ({head}, {v.get("default", "FALSE")})'
        if self.kind in ('INT', 'UINT', 'INT64', 'UINT64', 'DOUBLE'):
            for key in ('min', 'max', 'default'):
                if key not in v:
                    raise Error(f'{type_name}.{self.field}: a number needs min=, max= and default=')
            tail = f', {flags}' if self.kind == 'DOUBLE' else ''
            return f'ACCEL_OP_{self.kind} ({head}, {v["min"]}, {v["max"]}, {v["default"]}{tail})'
        if self.kind in ('ENUM', 'FLAGS'):
            return f'ACCEL_OP_{self.kind} ({head}, {self.get_type}, {v.get("default", "0")})'
        if self.kind == 'STRING':
            return f'ACCEL_OP_STRING ({head})'
        return f'ACCEL_OP_OBJECT ({head}, {self.get_type}, {flags})'


def comment_text(lines):
    text = ' '.join(re.sub(r'^\s*(/\*+|\*)\s?', '', line).replace('*/', '').strip() for line in lines)
    return re.sub(r'\s+', ' ', text).strip()


def parse_struct(path, body, first_line, public):
    params = []
    comment = []
    in_comment = False
    for offset, line in enumerate(body.split('\n')):
        where = f'{path}:{first_line + offset}'
        stripped = line.strip()
        if stripped == '/*< public >*/':
            public = True
            continue
        if not public:
            continue
        if in_comment or (stripped.startswith('/*') and not stripped.startswith('/*<')):
            comment.append(stripped)
            in_comment = not stripped.endswith('*/')
            continue
        if stripped == '/*< private >*/':
            public = False
            continue
        m = re.fullmatch(r'(\w+)\s*(\*?)\s*(\w+);\s*(?:/\*<(.*)>\*/)?', stripped)
        if m is None:
            if '/*<' in stripped:
                raise Error(f'{where}: not a field accel-mkops reads: “{stripped}”')
            continue
        base, star, field, words = m.groups()
        if words is not None:
            ctype = base + (' *' if star else '')
            params.append(Param(where, ctype, field, comment_text(comment), words.split()))
        comment = []
    return params


def line_of(text, index):
    return text[:index].count('\n') + 1


def parse_header(path, text=None, params=None):
    """The op type of a public header and the families (`typedef struct
    { … } AccelFooFields;` whose fields are annotated, in a private header
    that op types lay out alike) it declares. An op declaration's header
    comes as TEXT with the PARAMS read from the declaration."""
    if text is None:
        with open(path, encoding='utf-8') as f:
            text = f.read()
    found = []
    for fm in re.finditer(r'^typedef struct \{\n(.*?)\n\} (Accel\w+);', text, re.S | re.M):
        fields = parse_struct(path, fm.group(1), line_of(text, fm.start(1)), True)
        if fields:
            found.append({'path': path, 'type': fm.group(2), 'prefix': snake(fm.group(2)),
                          'params': fields, 'ctor': None})
    m = re.search(r'G_DECLARE_FINAL_TYPE \((\w+),\s*(\w+),\s*(\w+),\s*(\w+),\s*\w+\)', text)
    if m is None:
        if 'G_DECLARE_FINAL_TYPE' in text:
            raise Error(f'{path}: a G_DECLARE_FINAL_TYPE () accel-mkops cannot read')
        return found
    type_name, prefix, module, base = m.groups()
    sm = re.search(r'struct _%s \{\n(.*?)\n\};' % type_name, text, re.S)
    if sm is None:
        return found
    if params is None:
        params = parse_struct(path, sm.group(1), line_of(text, sm.start(1)), False)
    if params:
        ctor = re.search(r'^(\w+ \*)\s*%s_new \(([^)]*)\);' % prefix, text, re.M)
        found.append({'path': path, 'type': type_name, 'prefix': prefix,
                      'type_macro': f'{module}_TYPE_{base}', 'params': params, 'ctor': ctor})
    return found


def read_declaration(path):
    """An op declaration (`accel-NAME.op`): its header's text, and the
    parameters of its fields. Its lines are: comments and `#include`s; `op
    AccelFoo : AccelParent`; optionally `new (ARG, …)`, an ARG being a
    parameter field's name or a C argument; then the instance struct's public fields,
    annotated as in a header."""
    with open(path, encoding='utf-8') as f:
        lines = f.read().split('\n')
    includes, decl, ctor_args = [], None, None
    i = 0
    while i < len(lines):
        stripped = lines[i].strip()
        where = f'{path}:{i + 1}'
        if decl is None and (not stripped or stripped.startswith('/*')):
            if stripped.startswith('/*') and not stripped.endswith('*/'):
                raise Error(f'{where}: a comment before `op` is one line')
        elif decl is None and re.fullmatch(r'#include "[\w./-]+"', stripped):
            includes.append(stripped)
        elif decl is None:
            decl = re.fullmatch(r'op (Accel\w+) : (Accel\w+)', stripped)
            if decl is None:
                raise Error(f'{where}: expected `op AccelFoo : AccelParent`, not “{stripped}”')
        elif stripped.startswith('new ('):
            text = stripped
            while not text.endswith(')') and i + 1 < len(lines):
                i += 1
                text += ' ' + lines[i].strip()
            if not text.endswith(')'):
                raise Error(f'{where}: `new (` without its `)`')
            ctor_args = [a.strip() for a in text[5:-1].split(',')]
            i += 1
            break
        else:
            break
        i += 1
    if decl is None:
        raise Error(f'{path}: no `op AccelFoo : AccelParent` line')
    type_name, parent = decl.groups()
    body = lines[i:]
    while body and not body[0].strip():
        body.pop(0)
        i += 1
    while body and not body[-1].strip():
        body.pop()
    params = parse_struct(path, '\n'.join(body), i + 1, True)
    # A constructor argument named by its parameter takes its C type.
    fields = {p.field: p.arg_ctype for p in params}
    prefix = snake(type_name)
    obj_name = prefix.upper()[len('ACCEL_'):]
    out = ['/* SPDX-License-Identifier: LGPL-2.1-or-later */',
           f'/* Generated by accel-mkops.py from {os.path.basename(path)}; edit that. */',
           '#pragma once', ''] + includes + [
           '', 'G_BEGIN_DECLS', '',
           f'#define ACCEL_TYPE_{obj_name} ({prefix}_get_type ())',
           'ACCEL_API',
           f'G_DECLARE_FINAL_TYPE ({type_name}, {prefix}, ACCEL, {obj_name}, {parent})',
           '', f'struct _{type_name} {{', f'  {parent} parent_instance;', '', '  /*< public >*/']
    out += [('  ' + line) if line.strip() else '' for line in body]
    out += ['};', '']
    if ctor_args is not None:
        args = []
        for arg in ctor_args:
            if re.fullmatch(r'\w+', arg):
                if arg not in fields:
                    raise Error(f'{path}: new (): “{arg}” is no parameter of {type_name} (give a C argument)')
                ctype = fields[arg]
                arg = f'{ctype}{"" if ctype.endswith("*") else " "}{arg}'
            args.append(arg)
        out += ['ACCEL_API', f'AccelOp *{prefix}_new ({", ".join(args)});', '']
    out += ['G_END_DECLS', '']
    return '\n'.join(out), params


def header_name(path):
    return os.path.basename(path)[:-len('.op')] + '.h'


def constructor(op, families):
    """The constructor's doc comment and definition, or None where the
    header declares none whose arguments are all parameter fields."""
    if op['ctor'] is None:
        return None
    ret, args = op['ctor'].groups()
    by_field = {}
    for p in op['params']:
        if p.family:
            family = families.get(p.family)
            p = next((f for f in family['params'] if f.field == p.field), None) if family else None
        if p:
            by_field[p.field] = p
    chosen = []
    for arg in re.split(r',\s*', ' '.join(args.split())):
        am = re.fullmatch(r'(.*?)\s*(\**)(\w+)', arg)
        ctype = (am.group(1) + (' ' + am.group(2) if am.group(2) else '')).strip()
        param = by_field.get(am.group(3))
        if param is None or param.arg_ctype != ctype:
            return None
        chosen.append(param)
    doc = [f'/**', f' * {op["prefix"]}_new:']
    for p in chosen:
        # NULL leaves a buffer or object unset, to be set later (and refused
        # by accel_op_validate() while a required one is still unset).
        note = '(transfer none) (nullable): ' if p.kind in ('BUFFER', 'OBJECT', 'IMAGE') else ''
        doc.append(f' * @{p.field}: {note}{p.blurb}')
    doc += [' *',
            f' * Creates an #{op["type"]} with these properties set; the others keep',
            ' * their defaults.']
    images = [p.field for p in chosen if p.kind == 'IMAGE']
    if images:
        doc += [f' * Set the images\' formats and sizes (`{images[0]}-format`, `{images[0]}-width`, …)',
                ' * with g_object_set().']
    doc += [' *',
            f' * Returns: (transfer full): a new #{op["type"]}',
            ' */']
    signature = ', '.join(f'{p.arg_ctype}{"" if p.arg_ctype.endswith("*") else " "}{p.field}' for p in chosen)
    values = ', '.join(f'{c_string(p.name)}, {p.field}' for p in chosen)
    checks = [f'  g_return_val_if_fail ({p.field} == NULL || G_TYPE_CHECK_INSTANCE_TYPE ({p.field}, '
              f'{p.get_type or "accel_buffer_get_type"} ()), NULL);'
              for p in chosen if p.kind in ('BUFFER', 'OBJECT', 'IMAGE')]
    return '\n'.join(doc + [ret.strip(), f'{op["prefix"]}_new ({signature})', '{'] + checks
                     + [f'  return g_object_new ({op["type_macro"]}, {values}, NULL);', '}', ''])


def main(argv):
    if len(argv) >= 3 and argv[1] == '--headers':
        # accel-mkops.py --headers OUTDIR DECLARATION...
        try:
            for path in argv[3:]:
                text, _ = read_declaration(path)
                with open(os.path.join(argv[2], header_name(path)), 'w', encoding='utf-8') as f:
                    f.write(text)
        except Error as e:
            sys.stderr.write(f'accel-mkops: {e}\n')
            return 1
        return 0
    if len(argv) < 4:
        sys.stderr.write('usage: accel-mkops.py OUTPUT.c OUTPUT-private.h HEADER-OR-DECLARATION...\n'
                         '       accel-mkops.py --headers OUTDIR DECLARATION...\n')
        return 2
    out_c, out_h, inputs = argv[1], argv[2], argv[3:]
    try:
        ops = []
        for path in sorted(inputs, key=lambda p: header_name(p) if p.endswith('.op') else os.path.basename(p)):
            if path.endswith('.op'):
                text, params = read_declaration(path)
                ops += parse_header(path, text, params)
            else:
                ops += parse_header(path)
        families = {op['type']: op for op in ops}
        for op in ops:
            for p in op['params']:
                if p.family and (p.family not in families
                                 or not any(f.field == p.field and f.ctype == p.ctype
                                            for f in families[p.family]['params'])):
                    raise Error(f'{p.where}: {op["type"]}.{p.field}: no such field in family {p.family}')
    except Error as e:
        sys.stderr.write(f'accel-mkops: {e}\n')
        return 1
    banner = ('/* Generated by accel-mkops.py from the annotated fields of the op\n'
              ' * declarations and headers. Do not edit: edit those. */\n')
    decls = [banner, '#pragma once', '', '#include "accel-private.h"', '', 'G_BEGIN_DECLS', '']
    body = [banner, '#include <math.h>', f'#include "{os.path.basename(out_h)}"', '#include "accel-enum-types.h"']
    # The private headers, for their families' structs.
    body += [f'#include "{os.path.basename(h)}"' for h in sorted(inputs) if h.endswith('-private.h')] + ['']
    for op in ops:
        table = [p for p in op['params'] if not p.family and p.kind != 'IMAGE']
        n = len(table)
        if n:
            decls.append(f'extern const AccelOpParam _{op["prefix"]}_params[{n}];')
            body.append(f'const AccelOpParam _{op["prefix"]}_params[{n}] = {{')
            body += [f'  {p.entry(op["type"])},' for p in table]
            body += ['};', '']
        ctor = constructor(op, families)
        if ctor:
            body.append(ctor)
    decls += ['', 'G_END_DECLS', '']
    with open(out_h, 'w', encoding='utf-8') as f:
        f.write('\n'.join(decls))
    with open(out_c, 'w', encoding='utf-8') as f:
        f.write('\n'.join(body))
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
