/* Constant mass matrix of the VI / EM schemes: set-up (see mass_op.h). */
#include "schemes/mass_op.h"

/* Dense form: M once, M^-1 exactly if diagonal, else by dense LU. */
static int dense_form(lv_mass_op *mo, const lv_model *m, const double *q) {
  int d = mo->d;
  size_t dd = (size_t)d * d;
  mo->M = lv_calloc(dd, sizeof(double));
  mo->Minv = lv_calloc(dd, sizeof(double));
  if (!mo->M || !mo->Minv) return LV_ENOMEM;
  LV_CHECK(lv_model_mass_dense(m, q, mo->M));
  mo->diag = 1;
  for (int j = 0; j < d; j++)
    for (int i = 0; i < d; i++)
      if (i != j && mo->M[i + (size_t)j * d] != 0.0) mo->diag = 0;
  for (int i = 0; i < d; i++) {
    mo->md[i] = mo->M[i + (size_t)i * d];
    if (!(mo->md[i] > 0.0)) return LV_EINPUT; /* not positive definite */
    mo->rs[i] = 1.0 / mo->md[i];
    if (mo->diag) mo->Minv[i + (size_t)i * d] = mo->rs[i];
  }
  if (mo->diag) return 0;
  lv_linsol *ls = NULL;
  LV_CHECK(lv_linsol_new(&ls, LV_LINSOL_DENSE, d, 0));
  int rc = lv_linsol_begin(ls);
  lv_sink s = lv_linsol_sink(ls);
  if (!rc) rc = lv_model_mass(m, q, &s);
  if (!rc) rc = lv_linsol_factor(ls);
  for (int j = 0; j < d && !rc; j++) {
    double *col = mo->Minv + (size_t)j * d;
    col[j] = 1.0;
    rc = lv_linsol_solve(ls, col);
  }
  lv_linsol_free(ls);
  return rc;
}

/* Sparse form of a matrix whose inverse is not sparse: M captured, M^-1
 * from the dense form, entry by entry. */
static int sparse_from_dense(lv_mass_op *mo, const lv_model *m, const double *q) {
  int d = mo->d;
  LV_CHECK(dense_form(mo, m, q));
  lv_spm_free(&mo->sM);
  LV_CHECK(lv_spm_end(&mo->sM, lv_model_mass(m, q, lv_spm_begin(&mo->sM))));
  lv_spm_free(&mo->sMi);
  lv_sink *s = lv_spm_begin(&mo->sMi);
  int rc = 0;
  for (int i = 0; i < d && !rc; i++)
    for (int j = 0; j < d && !rc; j++) {
      double v = mo->Minv[i + (size_t)j * d];
      if (v != 0.0) rc = lv_sink_add(s, i, j, v);
    }
  LV_CHECK(lv_spm_end(&mo->sMi, rc));
  mo->sparse = 1;
  return 0;
}

int lv_mass_op_init(lv_mass_op *mo, const lv_model *m, const double *q, int form) {
  int d = lv_model_nv(m);
  memset(mo, 0, sizeof *mo);
  mo->d = d;
  lv_spm_init(&mo->sM, d, d);
  lv_spm_init(&mo->sMi, d, d);
  mo->md = lv_calloc((size_t)d, sizeof(double));
  mo->rs = lv_calloc((size_t)d, sizeof(double));
  if (!mo->md || !mo->rs) return LV_ENOMEM;
  if (form == LV_MASS_SPARSE) {
    int rc = lv_spm_mass(m, q, LV_MASS_MAX_BLOCK, &mo->sM, &mo->sMi, mo->md);
    if (rc == 0) {
      mo->sparse = 1;
      for (int i = 0; i < d; i++) mo->rs[i] = 1.0 / mo->md[i];
      mo->sdM = lv_spm_diag_values(&mo->sM);
      mo->sdMi = mo->sdM ? lv_spm_diag_values(&mo->sMi) : NULL;
      if (!mo->sdMi) mo->sdM = NULL;
      return 0;
    }
    if (rc != LV_ENOTIMPL) return rc;
    return sparse_from_dense(mo, m, q);
  }
  return dense_form(mo, m, q);
}

void lv_mass_op_free(lv_mass_op *mo) {
  if (!mo) return;
  free(mo->M);
  free(mo->Minv);
  free(mo->md);
  free(mo->rs);
  lv_spm_free(&mo->sM);
  lv_spm_free(&mo->sMi);
  memset(mo, 0, sizeof *mo);
}
