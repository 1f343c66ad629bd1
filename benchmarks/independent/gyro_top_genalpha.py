#!/usr/bin/python3
"""Independent check of the index-3 generalized-alpha instability on gyro-top.

A from-scratch NumPy implementation of the (linear-space) index-3
generalized-alpha method of Arnold & Bruels (Chung-Hulbert parameters from
rho_inf, constraint rows scaled by 1/(beta h^2), Newton with a
finite-difference Jacobian), written from the equations, not from livens,
on the gyroscopic top in director coordinates (models/gyro_top.c: m = 0.7069,
I = 5.3014e-4, l = 0.075, q in R^12, 9 constraints).  It takes the initial
state from the first row of a livens CSV, so both start identically:

    livens run gyro-top --scheme genalpha --step 1e-3 --t-end 0.01 --out gt.csv
    python3 gyro_top_genalpha.py 0.9 1e-3 0.4 gt.csv   # rho_inf h T csv

Measured (README): rho_inf = 0.9, h = 1e-3 blows up near t = 0.15
(|G v| 3.4e-2, 0.81, 74 at t = 0.05, 0.10, 0.15), as livens does;
rho_inf = 0.6 stays bounded.  Needs python3-numpy (not a build dependency).
"""
import csv
import sys

import numpy as np

rows=list(csv.reader(open(sys.argv[4])))
hdr=rows[0]; r0=[float(x) for x in rows[1]]
q0=np.array(r0[1:13]); v0=np.array(r0[13:25])
m=0.7069; I=5.3014e-4; l=0.075; grav=9.81
E=np.array([I/2]*3)
M=np.diag([m]*3+[E[0]]*3+[E[1]]*3+[E[2]]*3)
D1,D2,D3=3,6,9
pa=[D1,D1,D2]; pb=[D2,D3,D3]
def dV(q): g=np.zeros(12); g[2]=m*grav; return g
def V(q): return m*grav*q[2]
def gfun(q):
    g=np.zeros(9)
    for i in range(3): d=q[D1+3*i:D1+3*i+3]; g[i]=0.5*(d@d-1)
    for r in range(3): g[3+r]=q[pa[r]:pa[r]+3]@q[pb[r]:pb[r]+3]
    g[6:9]=q[0:3]/l-q[D3:D3+3]
    return g
def G(q):
    J=np.zeros((9,12))
    for i in range(3): J[i,D1+3*i:D1+3*i+3]=q[D1+3*i:D1+3*i+3]
    for r in range(3):
        J[3+r,pa[r]:pa[r]+3]=q[pb[r]:pb[r]+3]; J[3+r,pb[r]:pb[r]+3]=q[pa[r]:pa[r]+3]
    for i in range(3): J[6+i,i]=1/l; J[6+i,D3+i]=-1
    return J
def curvv(v):  # D_q(G(q) v) v: the acceleration-level constraint term
    c=np.zeros(9)
    for i in range(3): d=v[D1+3*i:D1+3*i+3]; c[i]=d@d
    for r in range(3): c[3+r]=2*v[pa[r]:pa[r]+3]@v[pb[r]:pb[r]+3]
    return c
def energy(q,v): return 0.5*v@M@v+V(q)
rho=float(sys.argv[1]); h=float(sys.argv[2]); T=float(sys.argv[3])
am=(2*rho-1)/(rho+1); af=rho/(rho+1); gam=0.5+af-am; beta=0.25*(gam+0.5)**2
# consistent vd0
Gq=G(q0); K=np.block([[M,Gq.T],[Gq,np.zeros((9,9))]])
sol=np.linalg.solve(K,np.concatenate([-dV(q0),-curvv(v0)]))
vd=sol[:12]; lam=sol[12:]; a=vd.copy(); q=q0.copy(); v=v0.copy()
E0=energy(q,v); n=int(round(T/h))
for k in range(n):
    # unknowns: vd1, lam1
    def unpack(x):
        vd1=x[:12]; a1=((1-af)*vd1+af*vd-am*a)/(1-am)
        q1=q+h*v+h*h*(0.5-beta)*a+h*h*beta*a1
        v1=v+h*(1-gam)*a+h*gam*a1
        return vd1,a1,q1,v1
    def F(x):
        vd1,a1,q1,v1=unpack(x)
        return np.concatenate([M@vd1+dV(q1)+G(q1).T@x[12:], gfun(q1)/(beta*h*h)])
    x=np.concatenate([vd,lam])
    for it in range(30):
        f=F(x)

        if np.max(abs(f))<1e-9: break
        Jm=np.zeros((21,21)); eps=1e-7
        for j in range(21):
            xp=x.copy(); xp[j]+=eps*max(1,abs(x[j])); Jm[:,j]=(F(xp)-f)/(eps*max(1,abs(x[j])))
        x=x-np.linalg.solve(Jm,f)
    else:
        print("newton fail at t=",(k+1)*h); break
    vd1,a1,q1,v1=unpack(x)
    q,v,vd,a,lam=q1,v1,vd1,a1,x[12:]
    if (k+1)%50==0: print("%.3f E=%.6f |Gv|=%.3e it=%d"%((k+1)*h,energy(q,v),np.max(abs(G(q)@v)),it))
