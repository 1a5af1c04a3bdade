;; Two towers merged into one (a d b e c): e must go on c, but c is
;; at the bottom of the first tower, so both towers are dismantled
;; before the new tower can be built from the bottom up.
;; Initial towers (top -> bottom): a b c | d e
(define (problem blocksworld-p05)
  (:domain blocksworld)
  (:objects a b c d e - block)
  (:init
    (clear a)
    (on a b)
    (on b c)
    (ontable c)
    (clear d)
    (on d e)
    (ontable e)
    (handempty))
  (:goal (and
    (on a d)
    (on d b)
    (on b e)
    (on e c)
    (ontable c))))
