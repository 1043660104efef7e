//! "What am I looking at?" for the rooms whose text lives here (flow, kjit, pbp): the model,
//! the update with the paper's equation, and what each plot shows. Paragraphs are separated by
//! blank lines.

pub const FLOW: &str = "Optical flow as a grid MRF (Noorshams & Wainwright 2013, Sec. 5.2): every \
pixel's hidden state is its displacement in a box of [-d, d]^2 pixels around the flow handed down \
from the coarser pyramid level. The node potential compares frame 1 with frame 2 moved by that \
displacement, exp(-(I1(p) - I2(p + x))^2 / (2 sigma_u^2)); the edge potential makes neighbours move \
alike, exp(-|x_u - x_v|^2 / (2 sigma_uv^2)).\n\n\
Two solvers on the same model. SOSMP (the paper's Fig. 3: k samples from eq. 10, coefficients by eq. 13, here with the \
tensor Fourier basis) keeps r coefficients per message and moves them towards a Monte Carlo \
estimate of the BP update from those samples with step min(1, 1/(gamma (t+1))). Discrete sum-product BP keeps every message over the \
displacement lattice (step 1/2 px) and is the reference for what the MRF allows.\n\n\
Centre: frame 1 and frame 2 (or one pane flickering between them), each algorithm's flow in the \
Middlebury colour wheel (hue = direction, saturation = speed; the wheel beside it is the key) with \
optional arrows, the ground truth and the endpoint-error maps. Right: endpoint error (pixels) and \
angular error (degrees) per iteration, counted across the pyramid's levels, the residual, and for a \
clicked pixel its belief over the displacement box as a heat map with the ground truth marked.";

pub const KJIT: &str = "Expectation propagation for Bayesian logistic regression (Jitkrittum et al. \
2015). Each data point's logistic factor needs an EP message: projecting the product of the \
factor and its incoming messages onto a Gaussian (the oracle: quadrature here, importance \
sampling as eq. 2). KJIT learns that map just in time: random features of the incoming messages' \
mean embeddings (Alg. 1), Bayesian linear regression per output (eqs. 9-17), and the oracle is \
asked only when the predictive variance is above the threshold tau.\n\n\
Exps. 3 and 5: the classification error per problem for KJIT-EP, quadrature-EP and sampling-EP \
(main Figs. 6a, 9); the uncertainty trace, one dot per message call, oracle calls marked, tau and \
the noise floor as lines (main Figs. 5, 8); the posterior mean of w against the true w. Click the \
trace to inspect a call: its incoming messages, the oracle's answer and KJIT's prediction.\n\n\
Exps. 1 and 2: the Supp C table of log KL for five operators, KJIT's predictive variance along \
two test curves of incoming messages (Fig. 4), and the histogram and scatter of log KL on the test \
tuples (Fig. 3a, Supp Fig. 10). Exp. 4: KJIT-EP against quadrature-EP posteriors (Fig. 7).\n\n\
EP sites: one problem, one EP sweep per step, under a site schedule (sequential, synchronous = \
parallel EP, random, residual) and damping. The convergence debugger draws the factor graph, w in \
the middle and the sites around it, each site's message to w and the cavity sent back coloured by \
its change in the scrubbed sweep (natural parameters); click a message for its history. Residual \
scheduling recomputes every site's pending change (a cavity and a projection each) after each \
update, since every site shares w: n² projections per sweep instead of n.";

pub const PBP: &str = "Predictive belief propagation (Wang & Gordon 2020) learns a latent-variable \
graphical model without EM: on the latent junction tree every separator's message is a linear map \
of features of observed variables (Learning Steps 1-6: two-stage ridge regressions S1A, S1B and \
the rank-r_S regression S2, Sec. 4), and inference is tensor contraction, eq. (4): upward from \
the leaves with the evidence, then the query's marginal at the root.\n\n\
Left: the DAG with its observed and latent variables and the junction tree derived from it; \
choose evidence values and the query (right-click a node). The stand-in model replaces the \
paper's Fig. 4, whose graph is only an image.\n\n\
Right: P(query | evidence) from predictive BP, EM and online EM (10 restarts each) beside the \
exact posterior by enumeration, with each method's KL(exact || method) and its estimate of \
P(evidence); the learning table gives each method's average KL over all evidence values and its \
training time. Click a separator to see its learned messages against the exact ones.";
