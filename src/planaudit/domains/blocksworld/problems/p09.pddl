;; UNSOLVABLE: p02 (Sussman anomaly) with the goal replaced by a
;; two-block cycle: a on b and b on a.
;; Initial towers (top -> bottom): c a | b
(define (problem blocksworld-p09)
  (:domain blocksworld)
  (:objects a b c - block)
  (:init
    (clear c)
    (on c a)
    (ontable a)
    (clear b)
    (ontable b)
    (handempty))
  (:goal (and
    (on a b)
    (on b a))))
