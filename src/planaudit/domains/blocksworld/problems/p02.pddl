;; Sussman anomaly: achieving either goal first in the obvious way
;; undoes or blocks the other one.
;; Initial towers (top -> bottom): c a | b
(define (problem blocksworld-p02)
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
    (on b c))))
