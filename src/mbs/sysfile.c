/* System files (issue 15): a multibody system described in YAML (read with
 * libyaml's document loader) and built through the lv_mbs_* calls.  The
 * format is in doc/mbs.md.  Every value is checked; a failure is one
 * sentence "FILE:LINE: KEY: reason".  Unknown and repeated keys are
 * refused.  No buffer here has a length chosen by the file: names point
 * into the loaded document, tables grow with malloc.
 *
 * The reader descends a fixed depth (top level, element lists, elements,
 * vectors / the orientation map), so anchors and aliases in the file
 * (libyaml shares their nodes, it does not copy them) cannot make it
 * recurse or expand without bound. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include "lv_internal.h"
#include "livens/lv_mbs.h"
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include "mbs/mbs_impl.h"

static void put_why(char *why, size_t whylen, const char *fmt, ...) {
  if (!why || !whylen) return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(why, whylen, fmt, ap);
  va_end(ap);
}

#ifndef LV_HAVE_YAML

int lv_mbs_load_buffer(const unsigned char *text, size_t len, const char *name, const char *formulation,
                       lv_model **out, char *why, size_t whylen) {
  (void)text, (void)len;
  return lv_mbs_load(name, formulation, out, why, whylen);
}

int lv_mbs_load_run(const char *path, double *step, double *t_end, char *why, size_t whylen) {
  if (step) *step = 0;
  if (t_end) *t_end = 0;
  return lv_mbs_load(path, NULL, NULL, why, whylen);
}

int lv_mbs_load(const char *path, const char *formulation, lv_model **out, char *why, size_t whylen) {
  (void)formulation;
  if (out) *out = NULL;
  put_why(why, whylen,
          "%s: this build of livens has no YAML reader (libyaml was not found at configure time): system files are "
          "refused; install libyaml-dev and reconfigure",
          path ? path : "(NULL)");
  return LV_EINPUT;
}

#else
#include <yaml.h>

typedef struct {
  const char *path;
  yaml_document_t *doc;
  char *why;
  size_t whylen;
  lv_mbs *s;
  const char **names; /* element names, index = id - 1 */
  int nnames, capnames;
  double step, t_end; /* run: settings, 0 where not given */
} rd;

static int fail(rd *r, const yaml_node_t *n, const char *key, const char *fmt, ...) {
  if (!r->why || !r->whylen) return LV_EINPUT;
  char msg[512]; /* a sentence of ours; user strings in it are truncated by vsnprintf */
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  unsigned long line = n ? (unsigned long)n->start_mark.line + 1 : 0;
  if (key)
    snprintf(r->why, r->whylen, "%s:%lu: %s: %s", r->path, line, key, msg);
  else
    snprintf(r->why, r->whylen, "%s:%lu: %s", r->path, line, msg);
  /* control bytes of the file do not reach the terminal */
  for (char *c = r->why; *c; c++)
    if ((unsigned char)*c < 0x20 || *c == 0x7f) *c = '?';
  return LV_EINPUT;
}

static const char *scalar(const yaml_node_t *n) {
  return n && n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
}

/* Check that @p map is a mapping whose keys are scalars from @p allowed
 * (NULL-terminated), none repeated. */
static int check_keys(rd *r, const yaml_node_t *map, const char *what, const char *const *allowed) {
  if (!map || map->type != YAML_MAPPING_NODE) return fail(r, map, what, "expected a mapping of KEY: VALUE");
  for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++) {
    const yaml_node_t *kn = yaml_document_get_node(r->doc, p->key);
    const char *k = scalar(kn);
    if (!k) return fail(r, kn, what, "a key that is not a plain name");
    int ok = 0;
    for (const char *const *a = allowed; *a; a++)
      if (strcmp(*a, k) == 0) ok = 1;
    if (!ok) {
      char list[400] = "";
      size_t used = 0;
      for (const char *const *a = allowed; *a && used < sizeof list; a++)
        used += (size_t)snprintf(list + used, sizeof list - used, "%s%s", a == allowed ? "" : ", ", *a);
      return fail(r, kn, what, "unknown key '%.80s' (accepted here: %s)", k, list);
    }
    for (yaml_node_pair_t *q = map->data.mapping.pairs.start; q < p; q++)
      if (strcmp(scalar(yaml_document_get_node(r->doc, q->key)) ? scalar(yaml_document_get_node(r->doc, q->key)) : "",
                 k) == 0)
        return fail(r, kn, what, "key '%.80s' given twice", k);
  }
  return 0;
}

static yaml_node_t *find(rd *r, const yaml_node_t *map, const char *key) {
  for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++) {
    const char *k = scalar(yaml_document_get_node(r->doc, p->key));
    if (k && strcmp(k, key) == 0) return yaml_document_get_node(r->doc, p->value);
  }
  return NULL;
}

static int parse_num(rd *r, const yaml_node_t *n, const char *key, double *x) {
  const char *t = scalar(n);
  if (!t || !t[0]) return fail(r, n, key, "expected a number");
  char *end = NULL;
  errno = 0;
  double v = strtod(t, &end);
  if (end == t || *end || !isfinite(v)) return fail(r, n, key, "'%.80s' is not a finite number", t);
  *x = v;
  return 0;
}

/* A number under @p key; *given = 0 and *x untouched if absent. */
static int get_num(rd *r, const yaml_node_t *map, const char *key, int required, double *x) {
  yaml_node_t *n = find(r, map, key);
  if (!n) return required ? fail(r, map, key, "missing (required here)") : 0;
  return parse_num(r, n, key, x);
}

/* A list of @p nmin or @p nmax numbers under @p key into x; *count = how
 * many (0 if absent). */
static int get_vec(rd *r, const yaml_node_t *map, const char *key, int nmin, int nmax, int required, double *x,
                   int *count) {
  yaml_node_t *n = find(r, map, key);
  if (count) *count = 0;
  if (!n) return required ? fail(r, map, key, "missing (required here)") : 0;
  long len = n->type == YAML_SEQUENCE_NODE ? (long)(n->data.sequence.items.top - n->data.sequence.items.start) : -1;
  if (len != nmin && len != nmax) {
    if (nmin == nmax)
      return fail(r, n, key, "expected a list of %d numbers%s", nmin,
                  nmin == 3 ? ", e.g. [0, 0, 1]" : nmin == 2 ? ", e.g. [0, 1]" : "");
    return fail(r, n, key, "expected a list of %d or %d numbers", nmin, nmax);
  }
  for (long i = 0; i < len; i++)
    LV_CHECK(parse_num(r, yaml_document_get_node(r->doc, n->data.sequence.items.start[i]), key, &x[i]));
  if (count) *count = (int)len;
  return 0;
}

static int get_str(rd *r, const yaml_node_t *map, const char *key, int required, const char **s) {
  yaml_node_t *n = find(r, map, key);
  if (!n) return required ? fail(r, map, key, "missing (required here)") : 0;
  if (!scalar(n) || !scalar(n)[0]) return fail(r, n, key, "expected a name");
  *s = scalar(n);
  return 0;
}

/* The id of the element named under @p key ("ground": LV_MBS_GROUND). */
static int get_ref(rd *r, const yaml_node_t *map, const char *key, int *id) {
  const char *name = NULL;
  LV_CHECK(get_str(r, map, key, 1, &name));
  if (strcmp(name, "ground") == 0) return *id = LV_MBS_GROUND, 0;
  for (int i = 0; i < r->nnames; i++)
    if (strcmp(r->names[i], name) == 0) return *id = i + 1, 0;
  return fail(r, find(r, map, key), key, "no body or particle is named '%.80s'", name);
}

static int add_name(rd *r, const yaml_node_t *el, const char *name) {
  if (strcmp(name, "ground") == 0) return fail(r, el, "name", "'ground' is the inertial frame's name");
  for (int i = 0; i < r->nnames; i++)
    if (strcmp(r->names[i], name) == 0) return fail(r, el, "name", "'%.80s' is already the name of an element", name);
  if (r->nnames == r->capnames) {
    int cap = r->capnames ? 2 * r->capnames : 8;
    const char **nn = realloc(r->names, (size_t)cap * sizeof *nn);
    if (!nn) return LV_ENOMEM;
    r->names = nn, r->capnames = cap;
  }
  r->names[r->nnames++] = name;
  return 0;
}

/* The library's sentence about the element at @p el. */
static int lib(rd *r, const yaml_node_t *el, const char *what, int rc) {
  if (!rc) return 0;
  if (rc == LV_ENOMEM) return rc;
  fail(r, el, what, "%s", lv_mbs_error(r->s));
  return rc == LV_EUNKNOWN ? LV_EUNKNOWN : LV_EINPUT;
}

static int for_list(rd *r, const yaml_node_t *top, const char *key, int (*each)(rd *, const yaml_node_t *)) {
  yaml_node_t *n = find(r, top, key);
  if (!n) return 0;
  if (n->type != YAML_SEQUENCE_NODE) return fail(r, n, key, "expected a list of elements ('- ...' lines)");
  for (yaml_node_item_t *it = n->data.sequence.items.start; it < n->data.sequence.items.top; it++)
    LV_CHECK(each(r, yaml_document_get_node(r->doc, *it)));
  return 0;
}

static int orientation(rd *r, const yaml_node_t *el, double R[9], int *given) {
  yaml_node_t *o = find(r, el, "orientation");
  *given = 0;
  if (!o) return 0;
  static const char *const keys[] = {"matrix", "axis", "angle", "sequence", "angles", NULL};
  LV_CHECK(check_keys(r, o, "orientation", keys));
  int nm = 0, na = 0, ns = 0;
  double M[9], axis[3], angle = 0, ang[3];
  const char *seq = NULL;
  LV_CHECK(get_vec(r, o, "matrix", 9, 9, 0, M, &nm));
  LV_CHECK(get_vec(r, o, "axis", 3, 3, 0, axis, &na));
  LV_CHECK(get_vec(r, o, "angles", 3, 3, 0, ang, &ns));
  LV_CHECK(get_str(r, o, "sequence", 0, &seq));
  int has_angle = find(r, o, "angle") != NULL;
  if (has_angle) LV_CHECK(get_num(r, o, "angle", 1, &angle));
  int kinds = (nm > 0) + (na > 0 || has_angle) + (ns > 0 || seq != NULL);
  if (kinds != 1)
    return fail(r, o, "orientation",
                "give exactly one of: matrix: [9 numbers, row-major]; axis: [3] with angle: RAD; sequence: xyz with "
                "angles: [3 RAD]");
  if (nm) memcpy(R, M, sizeof M);
  if (na || has_angle) {
    if (!na || !has_angle) return fail(r, o, "orientation", "axis and angle go together");
    if (lv_mbs_rotation_axis_angle(axis, angle, R))
      return fail(r, o, "orientation", "the axis must be non-zero and the angle finite");
  }
  if (ns || seq) {
    if (!ns || !seq) return fail(r, o, "orientation", "sequence and angles go together");
    if (lv_mbs_rotation_cardan(seq, ang, R))
      return fail(r, o, "sequence", "'%.80s' is not three of x, y, z with consecutive ones distinct", seq);
  }
  *given = 1;
  return 0;
}

static int body(rd *r, const yaml_node_t *el) {
  static const char *const keys[] = {"name",     "mass",     "inertia", "position", "orientation", "velocity",
                                     "angular_velocity", "frame", NULL};
  LV_CHECK(check_keys(r, el, "bodies", keys));
  const char *name = NULL, *frame = "body";
  double m = 0, J[9], x[3] = {0, 0, 0}, v[3] = {0, 0, 0}, w[3] = {0, 0, 0}, R[9];
  int nJ = 0, hasR = 0;
  LV_CHECK(get_str(r, el, "name", 1, &name));
  LV_CHECK(add_name(r, el, name));
  LV_CHECK(get_num(r, el, "mass", 1, &m));
  if (!(m > 0)) return fail(r, find(r, el, "mass"), "mass", "must be positive");
  LV_CHECK(get_vec(r, el, "inertia", 3, 9, 1, J, &nJ));
  LV_CHECK(get_vec(r, el, "position", 3, 3, 0, x, NULL));
  LV_CHECK(get_vec(r, el, "velocity", 3, 3, 0, v, NULL));
  LV_CHECK(get_vec(r, el, "angular_velocity", 3, 3, 0, w, NULL));
  LV_CHECK(get_str(r, el, "frame", 0, &frame));
  if (strcmp(frame, "body") && strcmp(frame, "space"))
    return fail(r, find(r, el, "frame"), "frame", "'%.80s' is neither body nor space", frame);
  LV_CHECK(orientation(r, el, R, &hasR));
  int id = 0;
  LV_CHECK(lib(r, el, name,
               lv_mbs_add_body(r->s, m, nJ == 9 ? J : NULL, nJ == 3 ? J : NULL, x, hasR ? R : NULL, v, w,
                               frame[0] == 's' ? LV_MBS_SPACE_FRAME : LV_MBS_BODY_FRAME, &id)));
  return lib(r, find(r, el, "name"), "name", lv_mbs_set_name(r->s, id, name)); /* the CSV columns' prefix */
}

static int particle(rd *r, const yaml_node_t *el) {
  static const char *const keys[] = {"name", "mass", "position", "velocity", "planar", NULL};
  LV_CHECK(check_keys(r, el, "particles", keys));
  const char *name = NULL, *planar = "false";
  double m = 0, x[3] = {0, 0, 0}, v[3] = {0, 0, 0};
  LV_CHECK(get_str(r, el, "name", 1, &name));
  LV_CHECK(add_name(r, el, name));
  LV_CHECK(get_num(r, el, "mass", 1, &m));
  if (!(m > 0)) return fail(r, find(r, el, "mass"), "mass", "must be positive");
  /* planar: true: a planar particle (lv_mbs_add_planar_particle), two
   * coordinates (x, y) in the system's x-y plane */
  LV_CHECK(get_str(r, el, "planar", 0, &planar));
  if (strcmp(planar, "true") && strcmp(planar, "false"))
    return fail(r, find(r, el, "planar"), "planar", "'%.80s' is neither true nor false", planar);
  int pl = planar[0] == 't', n = pl ? 2 : 3;
  LV_CHECK(get_vec(r, el, "position", n, n, 1, x, NULL));
  LV_CHECK(get_vec(r, el, "velocity", n, n, 0, v, NULL));
  int id = 0;
  LV_CHECK(lib(r, el, name, pl ? lv_mbs_add_planar_particle(r->s, m, x, v, &id) : lv_mbs_add_particle(r->s, m, x, v, &id)));
  return lib(r, find(r, el, "name"), "name", lv_mbs_set_name(r->s, id, name)); /* the CSV columns' prefix */
}

static int joint(rd *r, const yaml_node_t *el) {
  static const char *const with_axes[] = {"type", "a", "point_a", "axis_a", "b", "point_b", "axis_b", "scale", NULL};
  static const char *const pts[] = {"type", "a", "point_a", "b", "point_b", "scale", NULL};
  static const char *const dist[] = {"type", "a", "point_a", "b", "point_b", "length", "scale", NULL};
  static const char *const types[] = {"spherical", "revolute", "universal", "cylindrical",
                                      "prismatic", "fixed",    "distance",  NULL};
  if (!el || el->type != YAML_MAPPING_NODE) return fail(r, el, "joints", "expected a mapping of KEY: VALUE");
  const char *type = NULL;
  LV_CHECK(get_str(r, el, "type", 1, &type));
  int k = 0;
  while (types[k] && strcmp(types[k], type)) k++;
  if (!types[k])
    return fail(r, find(r, el, "type"), "type",
                "unknown joint '%.80s' (spherical, revolute, universal, cylindrical, prismatic, fixed, distance)",
                type);
  int axes = k >= 1 && k <= 4;
  LV_CHECK(check_keys(r, el, "joints", axes ? with_axes : k == 6 ? dist : pts));
  int a, b;
  double Xa[3] = {0, 0, 0}, Xb[3] = {0, 0, 0}, Aa[3], Ab[3], L = 0;
  LV_CHECK(get_ref(r, el, "a", &a));
  LV_CHECK(get_ref(r, el, "b", &b));
  LV_CHECK(get_vec(r, el, "point_a", 3, 3, 0, Xa, NULL));
  LV_CHECK(get_vec(r, el, "point_b", 3, 3, 0, Xb, NULL));
  if (axes) {
    LV_CHECK(get_vec(r, el, "axis_a", 3, 3, 1, Aa, NULL));
    LV_CHECK(get_vec(r, el, "axis_b", 3, 3, 1, Ab, NULL));
  }
  if (k == 6) {
    LV_CHECK(get_num(r, el, "length", 1, &L));
    if (!(L > 0)) return fail(r, find(r, el, "length"), "length", "must be positive");
  }
  int rc = 0;
  switch (k) {
  case 0: rc = lv_mbs_add_spherical(r->s, a, Xa, b, Xb); break;
  case 1: rc = lv_mbs_add_revolute(r->s, a, Xa, Aa, b, Xb, Ab); break;
  case 2: rc = lv_mbs_add_universal(r->s, a, Xa, Aa, b, Xb, Ab); break;
  case 3: rc = lv_mbs_add_cylindrical(r->s, a, Xa, Aa, b, Xb, Ab); break;
  case 4: rc = lv_mbs_add_prismatic(r->s, a, Xa, Aa, b, Xb, Ab); break;
  case 5: rc = lv_mbs_add_fixed(r->s, a, Xa, b, Xb); break;
  default: rc = lv_mbs_add_distance(r->s, a, Xa, b, Xb, L); break;
  }
  LV_CHECK(lib(r, el, type, rc));
  /* the joint's rows times scale (lv_mbs_scale_last_joint; default 1) */
  double sc = 1.0;
  LV_CHECK(get_num(r, el, "scale", 0, &sc));
  if (sc == 1.0) return 0;
  return lib(r, find(r, el, "scale"), "scale", lv_mbs_scale_last_joint(r->s, sc));
}

static int spring(rd *r, const yaml_node_t *el) {
  static const char *const keys[] = {"a", "point_a", "b", "point_b", "stiffness", "rest_length", NULL};
  LV_CHECK(check_keys(r, el, "springs", keys));
  int a, b;
  double Xa[3] = {0, 0, 0}, Xb[3] = {0, 0, 0}, k = 0, L0 = 0;
  LV_CHECK(get_ref(r, el, "a", &a));
  LV_CHECK(get_ref(r, el, "b", &b));
  LV_CHECK(get_vec(r, el, "point_a", 3, 3, 0, Xa, NULL));
  LV_CHECK(get_vec(r, el, "point_b", 3, 3, 0, Xb, NULL));
  LV_CHECK(get_num(r, el, "stiffness", 1, &k));
  LV_CHECK(get_num(r, el, "rest_length", 0, &L0));
  if (!(k >= 0)) return fail(r, find(r, el, "stiffness"), "stiffness", "must be >= 0");
  if (!(L0 >= 0)) return fail(r, find(r, el, "rest_length"), "rest_length", "must be >= 0");
  return lib(r, el, "spring", lv_mbs_add_spring(r->s, a, Xa, b, Xb, k, L0));
}

static int damper(rd *r, const yaml_node_t *el) {
  static const char *const keys[] = {"a", "point_a", "b", "point_b", "coefficient", NULL};
  LV_CHECK(check_keys(r, el, "dampers", keys));
  int a, b;
  double Xa[3] = {0, 0, 0}, Xb[3] = {0, 0, 0}, c = 0;
  LV_CHECK(get_ref(r, el, "a", &a));
  LV_CHECK(get_ref(r, el, "b", &b));
  LV_CHECK(get_vec(r, el, "point_a", 3, 3, 0, Xa, NULL));
  LV_CHECK(get_vec(r, el, "point_b", 3, 3, 0, Xb, NULL));
  LV_CHECK(get_num(r, el, "coefficient", 1, &c));
  if (!(c >= 0)) return fail(r, find(r, el, "coefficient"), "coefficient", "must be >= 0");
  return lib(r, el, "damper", lv_mbs_add_damper(r->s, a, Xa, b, Xb, c));
}

static int symmetry(rd *r, const yaml_node_t *el) {
  static const char *const rot[] = {"type", "axis", "point", NULL};
  static const char *const tra[] = {"type", "direction", NULL};
  static const char *const bod[] = {"type", "body", "axis", "point", NULL};
  if (!el || el->type != YAML_MAPPING_NODE) return fail(r, el, "symmetries", "expected a mapping of KEY: VALUE");
  const char *type = NULL;
  LV_CHECK(get_str(r, el, "type", 1, &type));
  double axis[3], point[3] = {0, 0, 0};
  if (strcmp(type, "rotation") == 0) {
    LV_CHECK(check_keys(r, el, "symmetries", rot));
    LV_CHECK(get_vec(r, el, "axis", 3, 3, 1, axis, NULL));
    LV_CHECK(get_vec(r, el, "point", 3, 3, 0, point, NULL));
    return lib(r, el, "rotation", lv_mbs_add_rotation_symmetry(r->s, axis, point));
  }
  if (strcmp(type, "translation") == 0) {
    LV_CHECK(check_keys(r, el, "symmetries", tra));
    LV_CHECK(get_vec(r, el, "direction", 3, 3, 1, axis, NULL));
    return lib(r, el, "translation", lv_mbs_add_translation_symmetry(r->s, axis));
  }
  if (strcmp(type, "body") == 0) {
    int id;
    LV_CHECK(check_keys(r, el, "symmetries", bod));
    LV_CHECK(get_ref(r, el, "body", &id));
    LV_CHECK(get_vec(r, el, "axis", 3, 3, 1, axis, NULL));
    LV_CHECK(get_vec(r, el, "point", 3, 3, 0, point, NULL));
    return lib(r, el, "body", lv_mbs_add_body_symmetry(r->s, id, axis, point));
  }
  return fail(r, find(r, el, "type"), "type", "unknown symmetry '%.80s' (rotation, translation, body)", type);
}

/* Torsional springs and dampers (issue 15, forces.c):
 *   {a: NAME, axis_a: [3], b: NAME, axis_b: [3], stiffness: K, rest_angle: RAD}
 *   {a: NAME, axis_a: [3], b: NAME, axis_b: [3], coefficient: C} */
static int torsion(rd *r, const yaml_node_t *el, int damper) {
  static const char *const ks[] = {"a", "axis_a", "b", "axis_b", "stiffness", "rest_angle", NULL};
  static const char *const kd[] = {"a", "axis_a", "b", "axis_b", "coefficient", NULL};
  const char *what = damper ? "torsional_dampers" : "torsional_springs", *par = damper ? "coefficient" : "stiffness";
  LV_CHECK(check_keys(r, el, what, damper ? kd : ks));
  int a, b;
  double Aa[3], Ab[3], k = 0, th = 0;
  LV_CHECK(get_ref(r, el, "a", &a));
  LV_CHECK(get_ref(r, el, "b", &b));
  LV_CHECK(get_vec(r, el, "axis_a", 3, 3, 1, Aa, NULL));
  LV_CHECK(get_vec(r, el, "axis_b", 3, 3, 1, Ab, NULL));
  LV_CHECK(get_num(r, el, par, 1, &k));
  if (!(k >= 0)) return fail(r, find(r, el, par), par, "must be >= 0");
  if (!damper) LV_CHECK(get_num(r, el, "rest_angle", 0, &th));
  return lib(r, el, damper ? "torsional damper" : "torsional spring",
             damper ? lv_mbs_add_torsional_damper(r->s, a, Aa, b, Ab, k)
                    : lv_mbs_add_torsional_spring(r->s, a, Aa, b, Ab, k, th));
}
static int torsional_spring(rd *r, const yaml_node_t *el) { return torsion(r, el, 0); }
static int torsional_damper(rd *r, const yaml_node_t *el) { return torsion(r, el, 1); }

/* Applied loads (issue 15, forces.c): {body: NAME, [point: [3],] value: [3],
 * function: constant | sine | step | ramp, frequency, phase (sine), start
 * (step, ramp), end (ramp)}; only the keys of the function given. */
static int load_el(rd *r, const yaml_node_t *el, int torque) {
  static const char *const funcs[] = {"constant", "sine", "step", "ramp", NULL};
  static const char *const kf[4][8] = {{"body", "point", "value", "function", NULL},
                                       {"body", "point", "value", "function", "frequency", "phase", NULL},
                                       {"body", "point", "value", "function", "start", NULL},
                                       {"body", "point", "value", "function", "start", "end", NULL}};
  static const char *const kt[4][8] = {{"body", "value", "function", NULL},
                                       {"body", "value", "function", "frequency", "phase", NULL},
                                       {"body", "value", "function", "start", NULL},
                                       {"body", "value", "function", "start", "end", NULL}};
  const char *what = torque ? "torques" : "forces", *fn = "constant";
  if (!el || el->type != YAML_MAPPING_NODE) return fail(r, el, what, "expected a mapping of KEY: VALUE");
  LV_CHECK(get_str(r, el, "function", 0, &fn));
  int k = 0;
  while (funcs[k] && strcmp(funcs[k], fn)) k++;
  if (!funcs[k])
    return fail(r, find(r, el, "function"), "function", "unknown time function '%.80s' (constant, sine, step, ramp)",
                fn);
  LV_CHECK(check_keys(r, el, what, torque ? kt[k] : kf[k]));
  int id;
  lv_mbs_profile p;
  memset(&p, 0, sizeof p);
  p.kind = (lv_mbs_profile_kind)k;
  double X[3] = {0, 0, 0};
  LV_CHECK(get_ref(r, el, "body", &id));
  if (!torque) LV_CHECK(get_vec(r, el, "point", 3, 3, 0, X, NULL));
  LV_CHECK(get_vec(r, el, "value", 3, 3, 1, p.value, NULL));
  if (k == LV_MBS_SINE) {
    LV_CHECK(get_num(r, el, "frequency", 1, &p.frequency));
    LV_CHECK(get_num(r, el, "phase", 0, &p.phase));
  }
  if (k == LV_MBS_STEP || k == LV_MBS_RAMP) LV_CHECK(get_num(r, el, "start", 1, &p.t0));
  if (k == LV_MBS_RAMP) {
    LV_CHECK(get_num(r, el, "end", 1, &p.t1));
    if (!(p.t1 > p.t0)) return fail(r, find(r, el, "end"), "end", "must be later than start");
  }
  return lib(r, el, torque ? "torque" : "force",
             torque ? lv_mbs_add_torque_profile(r->s, id, &p) : lv_mbs_add_force_profile(r->s, id, X, &p));
}
static int force(rd *r, const yaml_node_t *el) { return load_el(r, el, 0); }
static int torque(rd *r, const yaml_node_t *el) { return load_el(r, el, 1); }

/* run: {step: H, t_end: T}, both optional, positive. */
static int read_run(rd *r, const yaml_node_t *top) {
  static const char *const keys[] = {"step", "t_end", NULL};
  yaml_node_t *run = find(r, top, "run");
  if (!run) return 0;
  LV_CHECK(check_keys(r, run, "run", keys));
  LV_CHECK(get_num(r, run, "step", 0, &r->step));
  LV_CHECK(get_num(r, run, "t_end", 0, &r->t_end));
  if (find(r, run, "step") && !(r->step > 0)) return fail(r, find(r, run, "step"), "step", "must be positive");
  if (find(r, run, "t_end") && !(r->t_end > 0)) return fail(r, find(r, run, "t_end"), "t_end", "must be positive");
  return 0;
}

/* The system into *out; with out NULL only the run: settings (r->step, r->t_end). */
static int read_doc(rd *r, const char *formulation, lv_model **out) {
  yaml_node_t *top = yaml_document_get_root_node(r->doc);
  if (!top) return fail(r, NULL, NULL, "the file holds no system (empty)");
  static const char *const keys[] = {"name",    "formulation", "gravity", "bodies",     "particles",
                                     "joints",  "springs",     "dampers", "symmetries", "run",
                                     /* issue 15, forces.c */
                                     "torsional_springs", "torsional_dampers", "forces", "torques", NULL};
  LV_CHECK(check_keys(r, top, "top level", keys));
  LV_CHECK(read_run(r, top));
  if (!out) return 0;
  const char *form = "directors", *name = NULL;
  LV_CHECK(get_str(r, top, "formulation", 0, &form));
  LV_CHECK(get_str(r, top, "name", 0, &name));
  if (formulation) form = formulation;
  int rc = lv_mbs_new(&r->s, form);
  if (rc == LV_ENOMEM) return rc;
  if (rc) {
    fail(r, find(r, top, "formulation") ? find(r, top, "formulation") : top, "formulation", "%s%s",
         lv_mbs_error(r->s), formulation ? " (the formulation given to override the file's)" : "");
    return LV_EUNKNOWN;
  }
  /* bodies and particles get ids in file order of their lists: bodies first */
  LV_CHECK(for_list(r, top, "bodies", body));
  LV_CHECK(for_list(r, top, "particles", particle));
  double g[3];
  int ng = 0;
  LV_CHECK(get_vec(r, top, "gravity", 3, 3, 0, g, &ng));
  if (ng) LV_CHECK(lib(r, find(r, top, "gravity"), "gravity", lv_mbs_set_gravity(r->s, g)));
  LV_CHECK(for_list(r, top, "joints", joint));
  LV_CHECK(for_list(r, top, "springs", spring));
  LV_CHECK(for_list(r, top, "dampers", damper));
  LV_CHECK(for_list(r, top, "torsional_springs", torsional_spring));
  LV_CHECK(for_list(r, top, "torsional_dampers", torsional_damper));
  LV_CHECK(for_list(r, top, "forces", force));
  LV_CHECK(for_list(r, top, "torques", torque));
  LV_CHECK(for_list(r, top, "symmetries", symmetry));
  if (r->nnames == 0) return fail(r, top, NULL, "the system has no body and no particle");
  /* model name: the file's name: key, else the file name without directory and extension */
  char *own = NULL;
  if (!name) {
    const char *base = strrchr(r->path, '/');
    base = base ? base + 1 : r->path;
    size_t len = strlen(base);
    const char *dot = strrchr(base, '.');
    if (dot && dot != base) len = (size_t)(dot - base);
    own = malloc(len + 1);
    if (!own) return LV_ENOMEM;
    memcpy(own, base, len);
    own[len] = 0;
    name = own;
  }
  rc = lv_mbs_build(r->s, name, out);
  free(own);
  return lib(r, top, "system", rc);
}

/* Parse with @p parser (input set) and build; closes nothing. */
static int load(yaml_parser_t *parser, const char *path, const char *formulation, lv_model **out, char *why,
                size_t whylen, double *step, double *t_end) {
  yaml_document_t doc;
  int rc;
  if (!yaml_parser_load(parser, &doc)) {
    put_why(why, whylen, "%s:%lu: not YAML: %s%s%s", path, (unsigned long)parser->problem_mark.line + 1,
            parser->problem ? parser->problem : "parse error", parser->context ? " " : "",
            parser->context ? parser->context : "");
    return parser->error == YAML_MEMORY_ERROR ? LV_ENOMEM : LV_EINPUT;
  }
  rd r = {path, &doc, why, whylen, NULL, NULL, 0, 0, 0, 0};
  rc = read_doc(&r, formulation, out);
  if (rc && out && *out) lv_model_free(*out), *out = NULL;
  if (step) *step = rc ? 0 : r.step;
  if (t_end) *t_end = rc ? 0 : r.t_end;
  if (rc == LV_ENOMEM) put_why(why, whylen, "%s: out of memory reading the system", path);
  lv_mbs_free(r.s);
  free(r.names);
  yaml_document_delete(&doc);
  return rc;
}

/* Open @p path for the YAML parser: 0, LV_EIO (with the sentence) or
 * LV_ENOMEM; on success the caller deletes the parser and closes *f. */
static int open_parser(const char *path, FILE **f, yaml_parser_t *parser, char *why, size_t whylen) {
  *f = fopen(path, "rb");
  if (!*f) {
    put_why(why, whylen, "%s: cannot open the system file (%s)", path, strerror(errno));
    return LV_EIO;
  }
  if (!yaml_parser_initialize(parser)) {
    fclose(*f);
    return LV_ENOMEM;
  }
  yaml_parser_set_input_file(parser, *f);
  return 0;
}

int lv_mbs_load(const char *path, const char *formulation, lv_model **out, char *why, size_t whylen) {
  if (why && whylen) why[0] = 0;
  if (!out || !path) {
    put_why(why, whylen, "lv_mbs_load: NULL path or out");
    return LV_EINPUT;
  }
  *out = NULL;
  FILE *f;
  yaml_parser_t parser;
  LV_CHECK(open_parser(path, &f, &parser, why, whylen));
  int rc = load(&parser, path, formulation, out, why, whylen, NULL, NULL);
  yaml_parser_delete(&parser);
  fclose(f);
  return rc;
}

int lv_mbs_load_run(const char *path, double *step, double *t_end, char *why, size_t whylen) {
  if (why && whylen) why[0] = 0;
  if (step) *step = 0;
  if (t_end) *t_end = 0;
  if (!path) {
    put_why(why, whylen, "lv_mbs_load_run: NULL path");
    return LV_EINPUT;
  }
  FILE *f;
  yaml_parser_t parser;
  LV_CHECK(open_parser(path, &f, &parser, why, whylen));
  int rc = load(&parser, path, NULL, NULL, why, whylen, step, t_end);
  yaml_parser_delete(&parser);
  fclose(f);
  return rc;
}

int lv_mbs_load_buffer(const unsigned char *text, size_t len, const char *name, const char *formulation,
                       lv_model **out, char *why, size_t whylen) {
  if (why && whylen) why[0] = 0;
  if (!out || !name || (!text && len)) {
    put_why(why, whylen, "lv_mbs_load_buffer: NULL argument");
    return LV_EINPUT;
  }
  *out = NULL;
  yaml_parser_t parser;
  if (!yaml_parser_initialize(&parser)) return LV_ENOMEM;
  yaml_parser_set_input_string(&parser, text ? text : (const unsigned char *)"", len);
  int rc = load(&parser, name, formulation, out, why, whylen, NULL, NULL);
  yaml_parser_delete(&parser);
  return rc;
}

#endif
