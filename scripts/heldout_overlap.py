#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Do the held-out board photos (datasets/boards-heldout) overlap the real training crops of
squares-3lc? Cuts each labelled piece from the true board corners (corners-3lc masks) and
prints how close its best match among the training crops is, beside the same figure for the
squares-3lc validation crops. Needs numpy and opencv-python (e.g. the chessvision venv).
"""
import os, glob, json, numpy as np, cv2
R = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'shared', 'data', 'boards', 'train')
def load_dir(d):
    fs=sorted(glob.glob(d+'/*/*.JPG'))
    X=np.stack([cv2.resize(cv2.imread(f,0),(32,32),interpolation=cv2.INTER_AREA).astype(np.float32).ravel() for f in fs])
    cls=[os.path.basename(os.path.dirname(f)) for f in fs]
    return X,cls
def norm(X):
    X=X-X.mean(1,keepdims=True); return X/(np.linalg.norm(X,axis=1,keepdims=True)+1e-6)
T,tc=load_dir(R+'/squares-3lc/training'); T=norm(T)
V,vc=load_dir(R+'/squares-3lc/validation'); V=norm(V)
vm=np.array([c!='f' for c in vc])
sv=(V[vm]@T.T).max(1)
# held-out crops
H=[]
for line in open(os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'datasets', 'boards-heldout', 'labels.tsv')):
    if line.startswith('#'): continue
    name,pl,_set,_how=line.rstrip('\n').split('\t')
    if pl=='-': continue
    img=cv2.imread(R+'/corners-3lc/images/'+name,0)
    m=cv2.imread(R+'/corners-3lc/masks/'+os.path.splitext(name)[0]+'.png',0)
    ys,xs=np.nonzero(m>127); pts=np.stack([xs,ys],1).astype(np.float32)
    s=pts.sum(1); d=pts[:,0]-pts[:,1]
    tl,br,tr,bl=pts[s.argmin()],pts[s.argmax()],pts[d.argmax()],pts[d.argmin()]
    M=cv2.getPerspectiveTransform(np.float32([tl,tr,br,bl]),np.float32([[0,0],[512,0],[512,512],[0,512]]))
    w=cv2.warpPerspective(img,M,(512,512))
    rows=[]
    for r in pl.split('/'):
        row=''
        for ch in r: row+= '.'*int(ch) if ch.isdigit() else ch
        rows.append(row)
    for i in range(8):
        for j in range(8):
            if rows[i][j]!='.':
                H.append(cv2.resize(w[i*64:(i+1)*64,j*64:(j+1)*64],(32,32),interpolation=cv2.INTER_AREA).astype(np.float32).ravel())
H=norm(np.stack(H))
sh=(H@T.T).max(1)
for nm,s in [('validation (non-empty) vs training',sv),('held-out pieces vs training',sh)]:
    print(nm, len(s), 'median %.3f'%np.median(s), ' >0.95: %.1f%%'%(100*(s>0.95).mean()), ' >0.98: %.1f%%'%(100*(s>0.98).mean()), ' >0.99: %.1f%%'%(100*(s>0.99).mean()))
